/**
 * Mounts React trees into happy-dom and unmounts them after each test. Inside `act` by
 * default; `realScheduling()` makes a test file let React and the client run on their
 * own (updates from a real server arrive outside any `act`), waiting for frames instead.
 */
import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach } from 'vitest';

const flags = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };
flags.IS_REACT_ACT_ENVIRONMENT = true;

/** From now on in this file, render and update without `act`. */
export function realScheduling(): void {
  flags.IS_REACT_ACT_ENVIRONMENT = false;
}

const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
const tick = () => new Promise((r) => setTimeout(r, 0));

async function run(fn: () => void | Promise<void>): Promise<void> {
  if (flags.IS_REACT_ACT_ENVIRONMENT) {
    await act(async () => {
      await fn();
    });
  } else {
    await fn();
    await tick();
    await frame();
    await tick();
  }
}

const mounted: { root: Root; container: HTMLElement }[] = [];

export interface Mounted {
  container: HTMLElement;
  rerender(node: ReactNode): Promise<void>;
  unmount(): Promise<void>;
}

export async function mount(node: ReactNode): Promise<Mounted> {
  const container = document.createElement('div');
  document.body.appendChild(container);
  const root = createRoot(container);
  const entry = { root, container };
  mounted.push(entry);
  await run(() => root.render(node));
  return {
    container,
    rerender: (next) => run(() => root.render(next)),
    unmount: async () => {
      const i = mounted.indexOf(entry);
      if (i >= 0) mounted.splice(i, 1);
      await run(() => root.unmount());
      container.remove();
    },
  };
}

/** Runs `fn` (which changes external state), then lets `frames` animation frames pass. */
export async function update(fn: () => void, frames = 1): Promise<void> {
  await run(async () => {
    fn();
    for (let i = 0; i < frames; i++) await frame();
  });
}

afterEach(async () => {
  for (const { root, container } of mounted.splice(0)) {
    await run(() => root.unmount());
    container.remove();
  }
});
