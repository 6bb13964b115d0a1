/**
 * The server refuses frames over its payload limit by closing the socket (1009) or with
 * HTTP 413; the client must never send one, or it would reconnect and resend it forever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, BayouError, ErrorCodes, longPolling, websocket } from '../src/index.js';
import { startBayou, waitFor } from './helpers.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe.each([
  ['websocket', websocket],
  ['long-polling', longPolling],
] as const)('frame limits over %s', (_name, transport) => {
  async function setup() {
    const server = await startBayou({ timeout: 2000 });
    cleanup.push(() => server.close());
    const client = new BayouClient(server.url, { WebSocket, transports: [transport] });
    cleanup.push(() => client.disconnect());
    await client.connect();
    const received: unknown[] = [];
    const sub = client.subscribe('/big', (m) => received.push(m.data));
    await sub.ready;
    return { server, client, received };
  }

  it('rejects a message larger than maxFrameBytes at once and stays connected', async () => {
    const { client, received } = await setup();
    const transports: string[] = [];
    client.on('transport', (t) => transports.push(t));
    const error = await client.publish('/big', 'x'.repeat(70 * 1024)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BayouError);
    expect((error as BayouError).code).toBe(ErrorCodes.TOO_LARGE);
    await client.publish('/big', 'small');
    await waitFor(() => received.length > 0, 5000, 'the small message');
    expect(received).toEqual(['small']);
    expect(client.state).toBe('connected');
    expect(transports).toEqual([]);
  });

  it('splits a batch bigger than one frame and delivers all of it, in order', async () => {
    const { client, received } = await setup();
    const chunk = 'é'.repeat(1500); // 3,000 bytes in UTF-8: 100 of them need several frames
    await Promise.all(
      client.batch(() => Array.from({ length: 100 }, (_, i) => client.publish('/big', { i, chunk }))),
    );
    // One more on the same path: once it is in, every earlier one is (or never will be).
    await client.publish('/big', 'end');
    await waitFor(() => received.at(-1) === 'end', 5000, 'the last message');
    expect(received.slice(0, -1).map((d) => (d as { i: number }).i)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    expect(client.state).toBe('connected');
  });
});
