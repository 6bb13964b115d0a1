/**
 * The bindings over the real stack: `@bayou/client` connected to an in-process
 * `@bayou/server` (WebSocket via `ws`), rendering into happy-dom. What the server counts
 * is the truth: one subscription per subject however many cells show it, released with
 * the last cell, and with `visibleOnly` only while in view.
 */
import { BayouClient, type WebSocketConstructor } from '@bayou/client';
import { type BayouServer, createServer, demoSymbol } from '@bayou/server';
import { Profiler, type ReactNode } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../../../scripts/eventually.mjs';
import { BayouProvider, LiveCell, useConnectionState, useField } from '../src/index.js';
import { FakeIntersectionObserver } from './fake-client.js';
import { mount, realScheduling, update } from './render.js';

function StateText(): ReactNode {
  return <span id="state">{useConnectionState()}</span>;
}

function FieldStatus({ subject }: { subject: string }): ReactNode {
  const { data, status, error } = useField<number>(subject, 'x');
  return <span className="status">{`${status} ${data ?? '-'} ${error?.message ?? ''}`.trim()}</span>;
}

let server: BayouServer;
let url: string;
const clients: BayouClient[] = [];

async function connectedClient(): Promise<BayouClient> {
  const client = new BayouClient(url, { WebSocket: WebSocket as unknown as WebSocketConstructor });
  clients.push(client);
  await client.connect();
  return client;
}

const subscribers = (subject: string) => server.bayou.subscriberCount(subject);

/** The channel of every message `client` sends from now on. */
function outgoing(client: BayouClient): string[] {
  const channels: string[] = [];
  client.use({
    outgoing: (m) => {
      channels.push(m.channel);
      return m;
    },
  });
  return channels;
}

/** Waits until what the page shows satisfies `check`. */
const settle = (check: () => boolean, what: string) => eventually(check, 5000, what);

beforeAll(async () => {
  realScheduling();
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    records: [{ pattern: '/test/*' }, { pattern: '/secret/*' }],
    canSubscribe: (_session, channel) => !channel.startsWith('/secret/'),
    demoFeed: { symbols: 100, rate: 10 },
    providerLinger: 0,
  });
  url = `${await server.listen()}/bayeux`;
});
afterEach(async () => {
  vi.unstubAllGlobals();
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined);
});
afterAll(async () => {
  await server?.close();
});

describe('@bayou/react with @bayou/client and @bayou/server', () => {
  it('shows the connection state', async () => {
    const client = await connectedClient();
    const { container } = await mount(
      <BayouProvider client={client}>
        <StateText />
      </BayouProvider>,
    );
    expect(container.querySelector('#state')!.textContent).toBe('connected');
  });

  it('shows a record subscription being accepted, and one the server refuses', async () => {
    const client = await connectedClient();
    server.bayou.updateRecord('/test/status', { x: 1 });
    const { container } = await mount(
      <BayouProvider client={client} coalesce="none">
        <FieldStatus subject="/test/status" />
        <FieldStatus subject="/secret/status" />
      </BayouProvider>,
    );
    const texts = () => [...container.querySelectorAll('.status')].map((e) => e.textContent);
    await settle(
      () => texts()[0] === 'subscribed 1' && texts()[1]?.startsWith('error -') === true,
      'statuses',
    );
    expect(texts()[1]).toContain('403');
  });

  it('re-renders a cell only when its own field changes', async () => {
    const client = await connectedClient();
    const subject = '/test/render';
    server.bayou.updateRecord(subject, { x: 1, y: 1 });
    const renders = { x: 0, y: 0 };
    const { container } = await mount(
      <BayouProvider client={client}>
        {(['x', 'y'] as const).map((f) => (
          <Profiler key={f} id={f} onRender={() => renders[f]++}>
            <LiveCell subject={subject} field={f} placeholder="-" />
          </Profiler>
        ))}
      </BayouProvider>,
    );
    const text = (f: string) => container.querySelector(`[data-field="${f}"]`)!.textContent;
    await settle(() => text('x') === '1' && text('y') === '1', 'the snapshot');
    const before = { ...renders };
    for (let i = 2; i <= 5; i++) {
      server.bayou.updateRecord(subject, { y: i });
      await settle(() => text('y') === String(i), `y = ${i}`);
    }
    expect(renders.x).toBe(before.x);
    expect(renders.y).toBe(before.y + 4);
    expect(text('x')).toBe('1');
  });

  it('makes one server subscription for a hundred cells on one subject, released with the last', async () => {
    const client = await connectedClient();
    const subject = `/demo/prices/${demoSymbol(0)}`;
    const fields = ['bid', 'ask', 'last', 'change', 'volume', 'time'];
    const cells = (n: number) => (
      <BayouProvider client={client}>
        {Array.from({ length: n }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list
          <LiveCell key={i} subject={subject} field={fields[i % 6]!} placeholder="-" />
        ))}
      </BayouProvider>
    );
    const view = await mount(cells(100));
    const shown = () => [...view.container.querySelectorAll('[data-field]')].map((e) => e.textContent);
    await settle(() => shown().every((t) => t !== '-'), 'every cell to show a value');
    expect(subscribers(subject)).toBe(1);
    const first = view.container.querySelector('[data-field="time"]')!.textContent;
    await settle(
      () => view.container.querySelector('[data-field="time"]')!.textContent !== first,
      'a new time from the feed',
    );
    expect(subscribers(subject)).toBe(1);

    const sent = outgoing(client);
    await view.rerender(cells(1));
    // A later message from the same client: an unsubscribe would have gone ahead of it.
    await client.publish('/after/rerender', 1);
    expect(sent).toContain('/after/rerender');
    expect(sent.filter((channel) => /^\/meta\/(un)?subscribe$/.test(channel))).toEqual([]);
    expect(subscribers(subject)).toBe(1);
    await view.unmount();
    await eventually(() => subscribers(subject) === 0, 5000, 'the release');
  });

  it('with visibleOnly subscribes on entering the viewport and releases on leaving', async () => {
    vi.stubGlobal('IntersectionObserver', FakeIntersectionObserver);
    const client = await connectedClient();
    const sent = outgoing(client);
    const symbols = [1, 2, 3].map(demoSymbol);
    const { container } = await mount(
      <BayouProvider client={client}>
        {symbols.map((s) => (
          <LiveCell key={s} subject={`/demo/prices/${s}`} field="last" visibleOnly placeholder="-" />
        ))}
      </BayouProvider>,
    );
    const cells = [...container.querySelectorAll('[data-field="last"]')];
    const live = () => symbols.map((s) => subscribers(`/demo/prices/${s}`));
    // A later message from the same client: a subscribe would have gone ahead of it.
    await client.publish('/after/mount', 1);
    expect(sent).toContain('/after/mount');
    expect(sent.filter((channel) => channel === '/meta/subscribe')).toEqual([]);
    expect(live()).toEqual([0, 0, 0]);

    await update(() => FakeIntersectionObserver.setInView(cells.slice(0, 2), true));
    await eventually(() => live().join() === '1,1,0', 5000, 'the two cells in view to subscribe');
    await settle(() => cells[0]!.textContent !== '-', 'a value in the first cell');

    await update(() => {
      FakeIntersectionObserver.setInView(cells.slice(0, 1), false);
      FakeIntersectionObserver.setInView(cells.slice(2), true);
    });
    await eventually(() => live().join() === '0,1,1', 5000, 'the subscriptions to follow the viewport');
    await update(() => FakeIntersectionObserver.setInView(cells, false));
    await eventually(() => live().join() === '0,0,0', 5000, 'every subscription released');
  });
});
