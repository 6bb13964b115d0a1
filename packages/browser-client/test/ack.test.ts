/**
 * The client's ack extension against the real `@bayou/server`, over both transports: a
 * frame lost with its WebSocket, or a long-poll response lost with its request, is sent
 * again after the reconnect while the session lives, once; without the extension it is gone.
 * Both ways of acknowledging: numbered frames (the default) and CometD's connect replies.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BayouClient, type FetchFunction, longPolling, websocket } from '../src/index.js';
import { socketControl, startBayou, waitFor } from './helpers.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A `fetch` whose next response `swallow` picks is lost: the request fails instead. */
function lossyFetch(control: { swallow: ((text: string) => boolean) | null }): FetchFunction {
  return (async (url: string, init: RequestInit) => {
    const response = await fetch(url, init);
    const text = await response.text();
    if (control.swallow?.(text)) {
      control.swallow = null;
      throw new TypeError('fetch failed');
    }
    return { ok: response.ok, status: response.status, text: async () => text };
  }) as unknown as FetchFunction;
}

async function lossyRun(
  transport: 'websocket' | 'long-polling',
  ack: boolean,
  ackFrames = true,
): Promise<{ got: number[]; sameSession: boolean; handshake: unknown }> {
  const server = await startBayou({ timeout: 2000 });
  cleanup.push(() => server.close());
  const control = socketControl();
  const client = new BayouClient(server.url, {
    WebSocket: control.WebSocket,
    fetch: lossyFetch(control),
    transports: [transport === 'websocket' ? websocket : longPolling],
    minReconnectDelay: 50,
    maxReconnectDelay: 100,
    ack,
    ackFrames,
  });
  cleanup.push(() => client.disconnect());
  let handshake: unknown;
  client.use({
    incoming: (m) => {
      if (m.channel === '/meta/handshake') handshake = m.ext?.ack;
      return m;
    },
  });
  await client.connect();
  const states: string[] = [];
  client.on('state', (state) => states.push(state));
  const session = client.clientId;
  const got: number[] = [];
  await client.subscribe('/feed', (m) => got.push(m.data as number)).ready;
  server.bayou.publish('/feed', 1);
  await waitFor(() => got.length === 1, 5000, 'the first message');
  // The frame (response) carrying message 2 dies with its socket (request), unseen.
  control.swallow = (frame) => frame.includes('"data":2');
  server.bayou.publish('/feed', 2);
  await waitFor(() => states.join() === 'reconnecting,connected', 5000, 'the socket to die and come back');
  server.bayou.publish('/feed', 3);
  await waitFor(() => got.includes(3), 5000, 'the message after the reconnect');
  // One more on the same path: once it is in, a late copy of an earlier one would be too.
  server.bayou.publish('/feed', 4);
  await waitFor(() => got.includes(4), 5000, 'the last message');
  return { got, sameSession: client.clientId === session, handshake };
}

describe.each(['websocket', 'long-polling'] as const)(
  'the ack extension against @bayou/server over %s',
  (transport) => {
    it('negotiates numbered frames and resends what was in flight when the connection died, exactly once', async () => {
      const { got, sameSession, handshake } = await lossyRun(transport, true);
      expect(handshake).toEqual({ enabled: true, batch: 0, frames: true });
      expect(sameSession).toBe(true);
      expect(got).toEqual([1, 2, 3, 4]);
    });

    it('does the same with ackFrames: false, in connect replies as CometD does', async () => {
      const { got, sameSession, handshake } = await lossyRun(transport, true, false);
      expect(handshake).toEqual({ enabled: true, batch: 0 });
      expect(sameSession).toBe(true);
      expect(got).toEqual([1, 2, 3, 4]);
    });

    it('loses that message with ack: false (what the extension is for)', async () => {
      const { got, sameSession, handshake } = await lossyRun(transport, false);
      expect(handshake).toBeUndefined();
      expect(sameSession).toBe(true);
      expect(got).toEqual([1, 3, 4]);
    });
  },
);

describe('numbered frames against @bayou/server', () => {
  it('stream deliveries without a connect per batch, and report them on a renewed connect', async () => {
    const server = await startBayou({ timeout: 30_000 });
    cleanup.push(() => server.close());
    const control = socketControl();
    const client = new BayouClient(server.url, { WebSocket: control.WebSocket, transports: [websocket] });
    cleanup.push(() => client.disconnect());
    const connects: Record<string, unknown>[] = [];
    client.use({
      outgoing: (m) => {
        if (m.channel === '/meta/connect') connects.push(m.ext ?? {});
        return m;
      },
    });
    await client.connect();
    const got: number[] = [];
    await client.subscribe('/stream', (m) => got.push(m.data as number)).ready;
    const before = connects.length;
    for (let i = 1; i <= 20; i++) {
      server.bayou.publish('/stream', i);
      await new Promise((r) => setImmediate(r)); // one frame each
    }
    await waitFor(() => got.length === 20, 5000, 'the 20 messages');
    // In connect replies that would be a connect per batch; here none was needed.
    expect(connects.length - before).toBeLessThanOrEqual(1);
    await waitFor(
      () => connects.slice(before).some((ext) => typeof ext.ackFrames === 'number' && ext.ackFrames > 0),
      5000,
      'a connect reporting the frames',
    );
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});
