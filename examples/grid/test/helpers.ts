/** Shared pieces of the grid tests: the grid server on 127.0.0.1 and headless Chromium. */
import { fileURLToPath } from 'node:url';
import type { BayouServer } from '@bayou/server';
import { type Browser, chromium } from 'playwright-core';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { createGridServer, type GridServerOptions } from '../src/server/grid-server.js';

export const packageDir = fileURLToPath(new URL('..', import.meta.url));
export const publicDir = fileURLToPath(new URL('../dist/public/', import.meta.url));

export async function startGrid(
  options: GridServerOptions = {},
): Promise<{ server: BayouServer; url: string }> {
  const server = await createGridServer({ host: '127.0.0.1', port: 0, publicDir, ...options });
  const url = await server.listen();
  return { server, url };
}

/** Headless Debian Chromium; a missing browser fails the suite (never a skip, never a download). */
export async function launchChromium(): Promise<Browser> {
  // launch() gives the browser a fresh temporary profile and removes it on close.
  return chromium.launch(chromiumOptions());
}

// The repository's one polling wait, under the name these tests use: (check, ms, what).
export { eventually as waitFor } from '../../../scripts/eventually.mjs';
