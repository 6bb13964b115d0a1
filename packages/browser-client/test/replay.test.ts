/**
 * Recovery against the real `@bayou/server` and its replay extension, over both
 * transports: a session that expired during an outage resubscribes with its positions
 * and gets what it missed, once; a gap beyond the history window and a restart that lost
 * the history give the `gap` event, not silence.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, type GapInfo, longPolling, streaming, websocket } from '../src/index.js';
import { startBayou, TestProxy, waitFor } from './helpers.js';

type Started = Awaited<ReturnType<typeof startBayou>>;
const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe.each([
  ['websocket', websocket],
  ['streaming', streaming],
  ['long-polling', longPolling],
] as const)('recovery against @bayou/server over %s', (_name, transport) => {
  async function setup(serverOptions: Parameters<typeof startBayou>[0] = {}) {
    const server = await startBayou({ maxInterval: 500, timeout: 2000, ...serverOptions });
    cleanup.push(() => server.close());
    const proxy = new TestProxy(`127.0.0.1:${(server.app.server.address() as AddressInfo).port}`);
    const base = await proxy.listen();
    cleanup.push(() => proxy.close());
    const client = new BayouClient(`${base}/bayeux`, {
      WebSocket,
      transports: [transport],
      minReconnectDelay: 100,
      maxReconnectDelay: 200,
    });
    cleanup.push(() => client.disconnect());
    const gaps: GapInfo[] = [];
    client.on('gap', (g) => gaps.push(g));
    await client.connect();
    const got: unknown[] = [];
    const sub = client.subscribe('/feed', (m) => got.push(m.data));
    await sub.ready;
    return { server, proxy, client, gaps, got, sub };
  }

  /** Cuts the client off until the server expired its session, running `during` meanwhile. */
  async function outage(
    server: Started,
    proxy: TestProxy,
    client: BayouClient,
    during: () => void | Promise<void>,
  ) {
    const session = client.clientId;
    proxy.setDown(true);
    await waitFor(() => client.state === 'reconnecting', 5000, 'the outage');
    // A long-poll held through the proxy ends with the server's hold timeout, then maxInterval.
    await waitFor(() => server.bayou.sessionCount === 0, 10_000, 'the session to expire');
    await during();
    proxy.setDown(false);
    await waitFor(() => client.state === 'connected' && client.clientId !== session, 10_000, 'a new session');
  }

  it('recovers what a subscription missed after its session expired: nothing lost, nothing twice', async () => {
    const { server, proxy, client, gaps, got, sub } = await setup();
    for (let n = 1; n <= 3; n++) server.bayou.publish('/feed', n);
    await waitFor(() => got.length === 3);
    await outage(server, proxy, client, () => {
      for (let n = 4; n <= 6; n++) server.bayou.publish('/feed', n);
    });
    await waitFor(() => sub.status === 'live');
    server.bayou.publish('/feed', 7);
    // One more on the same path: once it is in, a late copy of an earlier one would be too.
    server.bayou.publish('/feed', 8);
    await waitFor(() => got.includes(8));
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(gaps).toEqual([]);
  });

  it('emits gap when history cannot cover what was missed', async () => {
    const { server, proxy, client, gaps, got, sub } = await setup({ historySize: 2 });
    server.bayou.publish('/feed', 1);
    await waitFor(() => got.length === 1);
    await outage(server, proxy, client, () => {
      for (let n = 2; n <= 6; n++) server.bayou.publish('/feed', n);
    });
    await waitFor(() => gaps.length === 1, 5000, 'the gap event');
    expect(gaps[0]?.channel).toBe('/feed');
    expect(gaps[0]?.from?.offset).toBe(1);
    expect(gaps[0]?.to?.offset).toBe(6);
    expect(sub.status).toBe('gap');
    server.bayou.publish('/feed', 7);
    await waitFor(() => got.includes(7));
    expect(got).toEqual([1, 7]);
  });

  it('reports a gap, not silence, when a restart lost the history, and follows the new epoch', async () => {
    const first = await startBayou({ timeout: 2000 });
    const port = (first.app.server.address() as AddressInfo).port;
    let server = first;
    cleanup.push(() => server.close());
    const client = new BayouClient(first.url, {
      WebSocket,
      transports: [transport],
      minReconnectDelay: 100,
      maxReconnectDelay: 200,
    });
    cleanup.push(() => client.disconnect());
    const gaps: GapInfo[] = [];
    client.on('gap', (g) => gaps.push(g));
    await client.connect();
    const got: unknown[] = [];
    const sub = client.subscribe('/feed', (m) => got.push(m.data));
    await sub.ready;
    first.bayou.publish('/feed', 1);
    first.bayou.publish('/feed', 2);
    await waitFor(() => got.length === 2);
    await first.close();
    server = await startBayou({ timeout: 2000, port });
    await waitFor(() => gaps.length === 1, 10_000, 'the gap event');
    expect(gaps[0]?.channel).toBe('/feed');
    expect(gaps[0]?.from?.offset).toBe(2);
    expect(gaps[0]?.to?.epoch).not.toBe(gaps[0]?.from?.epoch);
    expect(sub.status).toBe('gap');
    server.bayou.publish('/feed', 'after the restart');
    await waitFor(() => got.length === 3);
    expect(got).toEqual([1, 2, 'after the restart']);
  });
});
