/**
 * `subscribe(channel, handler, { delta: true })` against the real `@bayou/server`: the
 * handler gets every message whole and right — each checked against what was published
 * under its `seq` — through a cut connection, a move off WebSocket when a proxy refuses it
 * mid-stream, and a recovery from history in a new session; and the wire carried deltas.
 */
import type { AddressInfo } from 'node:net';
import { EXT_DELTA } from '@bayou/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { deltas } from '../src/deltas.js';
import { BayouClient, longPolling, streaming, type TransportFactory, websocket } from '../src/index.js';
import { startBayou, TestProxy, waitFor } from './helpers.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A grid row: many fields, a few changing with `seq`. */
function row(seq: number): Record<string, unknown> {
  const fields: Record<string, unknown> = { symbol: 'ACME', venue: 'XLON', currency: 'GBP' };
  for (let i = 0; i < 16; i++) fields[`f${i}`] = 1000 + i;
  return { ...fields, bid: 100 + (seq % 7), ask: 101 + (seq % 5), seq };
}

async function setup(transports: TransportFactory[], serverOptions: Parameters<typeof startBayou>[0] = {}) {
  const server = await startBayou({ maxInterval: 500, timeout: 2000, ...serverOptions });
  cleanup.push(() => server.close());
  const proxy = new TestProxy(`127.0.0.1:${(server.app.server.address() as AddressInfo).port}`);
  const base = await proxy.listen();
  cleanup.push(() => proxy.close());
  const client = new BayouClient(`${base}/bayeux`, {
    WebSocket,
    transports,
    minReconnectDelay: 100,
    maxReconnectDelay: 200,
    minProbeDelay: 60_000,
    deltas,
  });
  cleanup.push(() => client.disconnect());
  // Every message as it came off the wire, to see the deltas.
  const wire: { ext?: Record<string, { from?: string }> }[] = [];
  client.use({
    incoming: (m) => {
      if (m.channel === '/prices/acme') wire.push(m as never);
      return m;
    },
  });
  await client.connect();
  const got: Record<string, unknown>[] = [];
  const sub = client.subscribe('/prices/acme', (m) => got.push(m.data as Record<string, unknown>), {
    delta: true,
  });
  await sub.ready;
  let seq = 0;
  const publish = (count: number): void => {
    for (let i = 0; i < count; i++) server.bayou.publish('/prices/acme', row(++seq));
  };
  const last = (): number => seq;
  return { server, proxy, client, got, wire, publish, last, sub };
}

/** Every message handed over is exactly the row published under its seq, each once, in order. */
function allRight(got: Record<string, unknown>[]): void {
  for (const data of got) expect(data).toEqual(row(data.seq as number));
  const seqs = got.map((d) => d.seq as number);
  expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
}

const deltasOnWire = (wire: { ext?: Record<string, { from?: string }> }[]) =>
  wire.filter((m) => m.ext?.[EXT_DELTA]?.from !== undefined).length;

describe.each([
  ['websocket', websocket],
  ['streaming', streaming],
  ['long-polling', longPolling],
] as const)('deltas in @bayou/client over %s', (_name, transport) => {
  it('hands over whole, right messages built from deltas, through a cut connection', async () => {
    const { proxy, client, got, wire, publish, last } = await setup([transport]);
    publish(10);
    await waitFor(() => got.length === 10);
    expect(deltasOnWire(wire)).toBeGreaterThan(5);
    proxy.setDown(true);
    await waitFor(() => client.state === 'reconnecting', 5000, 'the cut');
    publish(5);
    proxy.setDown(false);
    await waitFor(() => client.state === 'connected', 10_000, 'the reconnect');
    publish(10);
    await waitFor(() => got.some((d) => d.seq === last()), 10_000, 'the last row');
    allRight(got);
  });
});

describe('deltas in @bayou/client', () => {
  it('stay right when WebSocket is refused mid-stream and the client moves to long-polling', async () => {
    const { proxy, client, got, wire, publish, last } = await setup([websocket, longPolling]);
    publish(10);
    await waitFor(() => got.length === 10);
    expect(client.transport).toBe('websocket');
    proxy.mode = 'refuse-upgrade';
    proxy.setDown(true);
    publish(3);
    proxy.setDown(false);
    await waitFor(
      () => client.transport === 'long-polling' && client.state === 'connected',
      10_000,
      'the move',
    );
    publish(10);
    await waitFor(() => got.some((d) => d.seq === last()), 10_000, 'the last row');
    allRight(got);
    expect(deltasOnWire(wire)).toBeGreaterThan(10);
  });

  it('recover what a new session missed from history, whole, then go on with deltas', async () => {
    const { server, proxy, client, got, wire, publish, last, sub } = await setup([websocket]);
    publish(5);
    await waitFor(() => got.length === 5);
    const session = client.clientId;
    proxy.setDown(true);
    await waitFor(() => server.bayou.sessionCount === 0, 10_000, 'the session to expire');
    publish(4);
    proxy.setDown(false);
    await waitFor(() => client.clientId !== session && sub.status === 'live', 10_000, 'a new session');
    // The 4 missed ones recovered: the new session's subscribe has been served. (Its status
    // alone can still read 'live' from the old session for a moment; rows published then are
    // recovered from history, whole, not sent live as deltas.)
    await waitFor(() => got.length === 9, 10_000, 'the recovered rows');
    const before = deltasOnWire(wire);
    publish(6);
    await waitFor(() => got.some((d) => d.seq === last()), 10_000, 'the last row');
    // Nothing lost, nothing twice: 1 to 15, the 4 missed ones recovered.
    expect(got.map((d) => d.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    allRight(got);
    expect(deltasOnWire(wire) - before).toBeGreaterThan(3);
  });
});
