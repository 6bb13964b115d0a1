/**
 * The client is a standard Bayeux client: against a Faye server from npm it handshakes,
 * subscribes, publishes and receives, over WebSocket and over long-polling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, longPolling, websocket } from '../src/index.js';
import { type FayeServer, startFaye, waitFor } from './helpers.js';

let faye: FayeServer;
beforeAll(async () => {
  faye = await startFaye();
});
afterAll(async () => {
  await faye?.close();
});

describe.each([
  ['websocket', websocket],
  ['long-polling', longPolling],
] as const)('against a Faye server over %s', (name, transport) => {
  const open = () => new BayouClient(faye.url, { WebSocket, transports: [transport] });

  it('handshakes and connects on that transport', async () => {
    const c = open();
    await c.connect();
    expect(c.state).toBe('connected');
    expect(c.transport).toBe(name);
    expect(c.clientId).toMatch(/\w+/);
    await c.disconnect();
    expect(c.state).toBe('disconnected');
  });

  it('receives what another client publishes, on exact and wildcard subscriptions', async () => {
    const sub = open();
    const pub = open();
    await Promise.all([sub.connect(), pub.connect()]);
    const exact: unknown[] = [];
    const wild: unknown[] = [];
    await sub.subscribe('/room/one', (m) => exact.push(m.data)).ready;
    await sub.subscribe('/room/**', (m) => wild.push(m.data)).ready;
    await pub.publish('/room/one', { text: 'hello' });
    await pub.publish('/room/two/deep', 2);
    await waitFor(() => wild.length === 2, 5000, 'deliveries');
    expect(exact).toEqual([{ text: 'hello' }]);
    expect(wild).toEqual([{ text: 'hello' }, 2]);
    await Promise.all([sub.disconnect(), pub.disconnect()]);
  });

  it('receives a publish from the server side and stops after unsubscribe', async () => {
    const c = open();
    await c.connect();
    const got: unknown[] = [];
    const s = c.subscribe('/server/feed', (m) => got.push(m.data));
    await s.ready;
    await faye.publish('/server/feed', 'one');
    await waitFor(() => got.length === 1, 5000, 'the first message');
    s.unsubscribe();
    // A subscription sent after the unsubscribe: once it is acknowledged, so is the unsubscribe.
    const marks: unknown[] = [];
    await c.subscribe('/server/mark', (m) => marks.push(m.data)).ready;
    await faye.publish('/server/feed', 'two');
    // ...and a delivery published after 'two' on the same path: 'two' would be ahead of it.
    await faye.publish('/server/mark', 'after');
    await waitFor(() => marks.length === 1, 5000, 'the mark');
    expect(got).toEqual(['one']);
    await c.disconnect();
  });

  it('sends a batch in one request and gets every reply', async () => {
    const c = open();
    await c.connect();
    const got: unknown[] = [];
    await c.subscribe('/batch', (m) => got.push(m.data)).ready;
    const sent = c.batch(() => [c.publish('/batch', 1), c.publish('/batch', 2), c.publish('/batch', 3)]);
    await Promise.all(sent);
    await waitFor(() => got.length === 3, 5000, 'the batch');
    expect(got).toEqual([1, 2, 3]);
    await c.disconnect();
  });
});
