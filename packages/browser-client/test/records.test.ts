/**
 * Records against the real `@bayou/server`: the client keeps the image across deltas,
 * listeners on one subject share one server subscription, the last one closing
 * unsubscribes, and the store notifies only on change — with and without the compact
 * encoding, over both transports.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, longPolling, type RecordImage, websocket } from '../src/index.js';
import { socketControl, startBayou, waitFor } from './helpers.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe.each([
  ['websocket', websocket, true],
  ['websocket', websocket, false],
  ['long-polling', longPolling, true],
  ['long-polling', longPolling, false],
] as const)('records over %s (compact %s)', (_name, transport, compactRecords) => {
  async function setup(records: { pattern: string; maxFrequency?: number }[] = [{ pattern: '/fx/*' }]) {
    const server = await startBayou({ records, timeout: 2000 });
    cleanup.push(() => server.close());
    const client = new BayouClient(server.url, { WebSocket, transports: [transport], compactRecords });
    cleanup.push(() => client.disconnect());
    await client.connect();
    return { server, client };
  }

  it('keeps the image across deltas and reports the changed fields', async () => {
    const { server, client } = await setup();
    server.bayou.updateRecord('/fx/EURUSD', { bid: 1.1, ask: 1.2, venue: 'X' });
    const seen: [RecordImage, readonly string[]][] = [];
    const handle = client.record('/fx/EURUSD', {}, (image, changed) => seen.push([image, changed]));
    await waitFor(() => seen.length === 1);
    server.bayou.updateRecord('/fx/EURUSD', { bid: 1.11 });
    server.bayou.updateRecord('/fx/EURUSD', { ask: 1.21, volume: 5 });
    await waitFor(() => seen.length === 3);
    expect(seen.map(([, changed]) => [...changed].sort())).toEqual([
      ['ask', 'bid', 'venue'],
      ['bid'],
      ['ask', 'volume'],
    ]);
    expect(seen[2]?.[0]).toEqual({ bid: 1.11, ask: 1.21, venue: 'X', volume: 5 });
    expect(handle.store.getField('venue')).toBe('X');
    handle.close();
  });

  it('shares one server subscription between listeners and unsubscribes when the last closes', async () => {
    const { server, client } = await setup();
    server.bayou.updateRecord('/fx/GBPUSD', { bid: 1 });
    const a = client.record('/fx/GBPUSD', {}, () => undefined);
    const b = client.record('/fx/GBPUSD', {}, () => undefined);
    expect(a.store).toBe(b.store);
    await waitFor(() => server.bayou.subscriberCount('/fx/GBPUSD') === 1);
    await waitFor(() => a.store.getSnapshot() !== null);
    a.close();
    // A later message from the same client: an unsubscribe sent by close() would be ahead of it.
    await client.publish('/after/close', 1);
    expect(server.bayou.subscriberCount('/fx/GBPUSD')).toBe(1);
    b.close();
    await waitFor(() => server.bayou.subscriberCount('/fx/GBPUSD') === 0);
  });

  it('asks the server for a field subset and a maximum frequency', async () => {
    const { server, client } = await setup([{ pattern: '/fx/*', maxFrequency: 4 }]);
    server.bayou.updateRecord('/fx/USDJPY', { bid: 150, ask: 151 });
    const images: RecordImage[] = [];
    const handle = client.record('/fx/USDJPY', { fields: ['bid'], maxFrequency: 100 }, (image) =>
      images.push(image),
    );
    await waitFor(() => images.length === 1);
    expect(images[0]).toEqual({ bid: 150 });
    for (let i = 1; i <= 20; i++) server.bayou.updateRecord('/fx/USDJPY', { bid: 150 + i, ask: 151 + i });
    await waitFor(() => images.length === 2, 3000);
    // One more update: the next window carries it alone, so nothing else was left behind.
    server.bayou.updateRecord('/fx/USDJPY', { bid: 999 });
    await waitFor(() => images.length === 3, 3000);
    expect(images).toEqual([{ bid: 150 }, { bid: 170 }, { bid: 999 }]);
    handle.close();
  });

  it('serves listeners with different fields from one merged subscription, each its own fields', async () => {
    const { server, client } = await setup();
    server.bayou.updateRecord('/fx/USDCHF', { bid: 0.9, ask: 0.91, venue: 'X' });
    const bids: RecordImage[] = [];
    const asks: RecordImage[] = [];
    const a = client.record('/fx/USDCHF', { fields: ['bid'] }, (image) => bids.push(image));
    await waitFor(() => bids.length === 1);
    const b = client.record('/fx/USDCHF', { fields: ['ask'] }, (image) => asks.push(image));
    await waitFor(() => asks.length === 1, 5000, 'the second listener');
    expect(asks[0]).toEqual({ ask: 0.91 });
    server.bayou.updateRecord('/fx/USDCHF', { bid: 0.92, ask: 0.93, venue: 'Y' });
    await waitFor(() => asks.at(-1)?.ask === 0.93 && bids.at(-1)?.bid === 0.92);
    expect(bids.at(-1)).toEqual({ bid: 0.92 });
    expect(asks.at(-1)).toEqual({ ask: 0.93 });
    expect(server.bayou.subscriberCount('/fx/USDCHF')).toBe(1);
    a.close();
    b.close();
  });

  it('gives a stable snapshot that changes identity only when a field changes', async () => {
    const { server, client } = await setup();
    server.bayou.updateRecord('/fx/AUDUSD', { bid: 0.65 });
    const store = client.recordStore('/fx/AUDUSD');
    let notified = 0;
    const stop = store.subscribe(() => notified++);
    await waitFor(() => store.getSnapshot() !== null);
    const first = store.getSnapshot();
    expect(store.getSnapshot()).toBe(first);
    server.bayou.updateRecord('/fx/AUDUSD', { bid: 0.65 }); // unchanged: no message, no notification
    server.bayou.updateRecord('/fx/AUDUSD', { bid: 0.66 });
    await waitFor(() => notified === 2);
    expect(store.getSnapshot()).not.toBe(first);
    expect(store.getSnapshot()).toEqual({ bid: 0.66 });
    stop();
  });

  it('gets a fresh snapshot after the server restarts', async () => {
    const server = await startBayou({ records: [{ pattern: '/fx/*' }], timeout: 2000 });
    const port = new URL(server.url).port;
    const client = new BayouClient(server.url, {
      WebSocket,
      transports: [transport],
      compactRecords,
      minReconnectDelay: 50,
      maxReconnectDelay: 200,
    });
    cleanup.push(() => client.disconnect());
    await client.connect();
    server.bayou.updateRecord('/fx/NZDUSD', { bid: 0.6, ask: 0.61 });
    const handle = client.record('/fx/NZDUSD', {}, () => undefined);
    await waitFor(() => handle.store.getField('bid') === 0.6);
    await server.close();
    const again = await startBayou({ records: [{ pattern: '/fx/*' }], timeout: 2000, port: Number(port) });
    cleanup.push(() => again.close());
    // A new server has new aliases and field ids: the client must decode its snapshot afresh.
    again.bayou.updateRecord('/fx/NZDUSD', { ask: 0.7, bid: 0.69 });
    await waitFor(() => handle.store.getField('bid') === 0.69, 10_000);
    expect(handle.store.getSnapshot()).toEqual({ ask: 0.7, bid: 0.69 });
    handle.close();
  });
});

describe('many record subscriptions at once', () => {
  it('subscribes to 1,000 records in one go within the default server limits', async () => {
    const server = await startBayou({ records: [{ pattern: '/many/*' }], maxSubscriptionsPerSession: 2000 });
    cleanup.push(() => server.close());
    for (let i = 0; i < 1000; i++)
      server.bayou.updateRecord(`/many/${i}`, { v: i, name: `subject number ${i}` });
    const client = new BayouClient(server.url, { WebSocket, transports: [websocket] });
    cleanup.push(() => client.disconnect());
    const handles = client.batch(() =>
      Array.from({ length: 1000 }, (_, i) => client.record(`/many/${i}`, {}, () => undefined)),
    );
    await client.connect();
    await waitFor(() => handles.every((h) => h.store.getSnapshot() !== null), 15_000);
    expect(handles.map((h) => h.store.getField('v'))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(client.state).toBe('connected');
    for (const h of handles) h.close();
  });
});

describe('records across a reconnect', () => {
  it('gives a store closed and reopened while reconnecting a fresh snapshot, never a delta as the record', async () => {
    const server = await startBayou({ records: [{ pattern: '/fx/*' }], timeout: 2000 });
    cleanup.push(() => server.close());
    const control = socketControl();
    const client = new BayouClient(server.url, {
      WebSocket: control.WebSocket,
      transports: [websocket],
      minReconnectDelay: 300,
      maxReconnectDelay: 300,
    });
    cleanup.push(() => client.disconnect());
    await client.connect();
    const session = client.clientId;
    server.bayou.updateRecord('/fx/EURGBP', { bid: 0.85, ask: 0.86 });
    const store = client.recordStore('/fx/EURGBP');
    let stop = store.subscribe(() => undefined);
    await waitFor(() => store.getSnapshot() !== null);
    control.down = true;
    control.kill();
    await waitFor(() => client.state === 'reconnecting');
    stop();
    stop = store.subscribe(() => undefined);
    control.down = false;
    await waitFor(() => client.state === 'connected');
    expect(client.clientId).toBe(session);
    server.bayou.updateRecord('/fx/EURGBP', { bid: 0.9 });
    await waitFor(() => store.getField('bid') === 0.9);
    expect(store.getSnapshot()).toEqual({ bid: 0.9, ask: 0.86 });
    stop();
  });
});
