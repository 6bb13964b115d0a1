/** Records: snapshot then deltas, field subsets, conflation, providers, encodings. */
import { afterEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { eventually, type Msg, TestClient, type Transport } from './test-client.js';

const on = (c: TestClient, subject: string) =>
  c.received.filter((m) => m.channel === subject && m.successful === undefined);

describe.each<Transport>(['websocket', 'long-polling'])('records over %s', (transport) => {
  let s: Started;
  const clients: TestClient[] = [];
  const client = async (ext?: Record<string, unknown>): Promise<TestClient> => {
    const c = new TestClient(s.base, transport);
    clients.push(c);
    await c.connect(ext);
    return c;
  };
  const subscribeRecord = (c: TestClient, subject: string, record?: Record<string, unknown>) =>
    c.request({
      channel: '/meta/subscribe',
      clientId: c.clientId,
      subscription: subject,
      ...(record ? { ext: { record } } : {}),
    });

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.server.close();
  });

  it('sends the full image first, then only changed fields', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    s.server.bayou.updateRecord('/fx/EURUSD', { bid: 1.1, ask: 1.2, last: 1.15 });
    const c = await client();
    expect((await subscribeRecord(c, '/fx/EURUSD')).successful).toBe(true);
    await c.waitFor((m) => m.channel === '/fx/EURUSD');
    s.server.bayou.updateRecord('/fx/EURUSD', { bid: 1.11, ask: 1.2 });
    s.server.bayou.updateRecord('/fx/EURUSD', { bid: 1.11 }); // unchanged: nothing to send
    s.server.bayou.updateRecord('/fx/EURUSD', { last: 1.16 });
    await eventually(() => on(c, '/fx/EURUSD').length >= 3);
    await c.drained((ch, d) => s.server.bayou.publish(ch, d));
    expect(on(c, '/fx/EURUSD').map((m) => m.data)).toEqual([
      { bid: 1.1, ask: 1.2, last: 1.15 },
      { bid: 1.11 },
      { last: 1.16 },
    ]);
    expect(s.server.bayou.recordImage('/fx/EURUSD')).toEqual({ bid: 1.11, ask: 1.2, last: 1.16 });
  });

  it('sends only the fields a subscription asked for', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    s.server.bayou.updateRecord('/fx/GBPUSD', { bid: 1, ask: 2, volume: 3 });
    const c = await client();
    await subscribeRecord(c, '/fx/GBPUSD', { fields: ['bid', 'volume'] });
    await c.waitFor((m) => m.channel === '/fx/GBPUSD');
    s.server.bayou.updateRecord('/fx/GBPUSD', { ask: 2.5 });
    s.server.bayou.updateRecord('/fx/GBPUSD', { ask: 2.6, bid: 1.5 });
    await eventually(() => on(c, '/fx/GBPUSD').length >= 2);
    await c.drained((ch, d) => s.server.bayou.publish(ch, d));
    expect(on(c, '/fx/GBPUSD').map((m) => m.data)).toEqual([{ bid: 1, volume: 3 }, { bid: 1.5 }]);
  });

  it('conflates 100 updates inside a 500 ms window into one message with the latest values', async () => {
    s = await startServer({ records: [{ pattern: '/slow/*', throttleMs: 500 }] });
    s.server.bayou.updateRecord('/slow/x', { a: 0, b: 0, c: 'k' });
    const c = await client();
    await subscribeRecord(c, '/slow/x');
    await c.waitFor((m) => m.channel === '/slow/x');
    for (let i = 1; i <= 100; i++) s.server.bayou.updateRecord('/slow/x', { a: i, b: i % 2 === 0 ? i : 0 });
    await eventually(() => on(c, '/slow/x').length >= 2, 3000);
    // One more update: the next window carries it alone, so nothing else was left behind.
    s.server.bayou.updateRecord('/slow/x', { c: 'end' });
    await eventually(() => on(c, '/slow/x').length >= 3, 3000);
    expect(on(c, '/slow/x').map((m) => m.data)).toEqual([
      { a: 0, b: 0, c: 'k' },
      { a: 100, b: 100 },
      { c: 'end' },
    ]);
  });

  it('sends every update with throttle 0', async () => {
    s = await startServer({ records: [{ pattern: '/fast/*', throttleMs: 0 }] });
    s.server.bayou.updateRecord('/fast/x', { a: 0 });
    const c = await client();
    await subscribeRecord(c, '/fast/x');
    for (let i = 1; i <= 100; i++) s.server.bayou.updateRecord('/fast/x', { a: i });
    await eventually(() => on(c, '/fast/x').length >= 101);
    expect(on(c, '/fast/x').map((m) => (m.data as { a: number }).a)).toEqual(
      Array.from({ length: 101 }, (_, i) => i),
    );
  });

  it('clamps the frequency a subscription asks for to the pattern bound', async () => {
    s = await startServer({ records: [{ pattern: '/capped/*', maxFrequency: 2 }] });
    s.server.bayou.updateRecord('/capped/x', { a: 0 });
    const c = await client();
    const subscribedAt = Date.now();
    await subscribeRecord(c, '/capped/x', { maxFrequency: 1000 });
    await c.waitFor((m) => m.channel === '/capped/x');
    for (let i = 1; i <= 20; i++) s.server.bayou.updateRecord('/capped/x', { a: i });
    // The next message waits for the 500 ms window the snapshot opened (the asked 1 ms is not honoured).
    await eventually(() => on(c, '/capped/x').length >= 2, 2000, 'the update', 5);
    expect(Date.now() - subscribedAt).toBeGreaterThanOrEqual(450);
    expect(on(c, '/capped/x').map((m) => m.data)).toEqual([{ a: 0 }, { a: 20 }]);
  });

  it('gives a subscriber who arrives before the first image that image when it comes', async () => {
    s = await startServer({ records: [{ pattern: '/late/*' }] });
    const c = await client();
    await subscribeRecord(c, '/late/x');
    await c.drained((ch, d) => s.server.bayou.publish(ch, d));
    expect(on(c, '/late/x')).toEqual([]);
    s.server.bayou.updateRecord('/late/x', { v: 1 });
    expect((await c.waitFor((m) => m.channel === '/late/x')).data).toEqual({ v: 1 });
  });

  it('calls a provider once on the first subscriber and once, after the linger, when the last leaves', async () => {
    s = await startServer({ records: [{ pattern: '/p/*' }], providerLinger: 300 });
    const calls: string[] = [];
    s.server.bayou.provide('/p/*', {
      onRequest: (subject) => {
        calls.push(`request ${subject}`);
        s.server.bayou.updateRecord(subject, { ready: true });
      },
      onDiscard: (subject) => calls.push(`discard ${subject}`),
    });
    const [a, b] = [await client(), await client()];
    await subscribeRecord(a, '/p/x');
    await subscribeRecord(b, '/p/x');
    await a.waitFor((m) => m.channel === '/p/x');
    await b.waitFor((m) => m.channel === '/p/x');
    await a.unsubscribe('/p/x');
    await b.unsubscribe('/p/x');
    await subscribeRecord(a, '/p/x'); // back within the linger: no new request
    await a.unsubscribe('/p/x');
    const leftAt = Date.now();
    expect(calls).toEqual(['request /p/x']);
    await eventually(() => calls.length === 2, 3000, 'the discard', 5);
    expect(calls).toEqual(['request /p/x', 'discard /p/x']);
    // ...and the discard waited for the linger after the last one left.
    expect(Date.now() - leftAt).toBeGreaterThanOrEqual(250);
  });

  it('tags snapshots and deltas for clients that ask, and encodes compactly for those that negotiate it', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    s.server.bayou.updateRecord('/fx/USDJPY', { bid: 150.1, ask: 150.2 });
    const tagged = await client({ bayou: { records: true } });
    const compact = await client({ bayou: { compact: true } });
    await subscribeRecord(tagged, '/fx/USDJPY');
    await subscribeRecord(compact, '/fx/USDJPY');
    s.server.bayou.updateRecord('/fx/USDJPY', { ask: 150.3, volume: 7 });
    await eventually(() => on(tagged, '/fx/USDJPY').length === 2 && on(compact, '/~r').length === 2);
    expect(on(tagged, '/fx/USDJPY').map((m) => m.ext)).toEqual([{ r: 's' }, { r: 'd' }]);
    // Decode the compact stream with nothing but what it carried.
    const names = new Map<string, string>();
    const decoded = on(compact, '/~r').map((m: Msg) => {
      const [alias, ids, kind, defs] = m.data as [
        number,
        Record<string, unknown>,
        string,
        Record<string, string>?,
      ];
      for (const [id, name] of Object.entries(defs ?? {})) names.set(id, name);
      return {
        alias,
        kind,
        fields: Object.fromEntries(Object.entries(ids).map(([id, v]) => [names.get(id), v])),
      };
    });
    expect(decoded).toEqual([
      { alias: decoded[0]?.alias, kind: 's', fields: { bid: 150.1, ask: 150.2 } },
      { alias: decoded[0]?.alias, kind: 'd', fields: { ask: 150.3, volume: 7 } },
    ]);
  });

  it('names a new field to a throttled compact subscriber that has not seen it', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*', throttleMs: 100 }] });
    s.server.bayou.updateRecord('/fx/AUDUSD', { bid: 0.65 });
    const c = await client({ bayou: { compact: true } });
    await subscribeRecord(c, '/fx/AUDUSD');
    await c.waitFor((m) => m.channel === '/~r');
    s.server.bayou.updateRecord('/fx/AUDUSD', { bid: 0.66, spread: 2 });
    await eventually(() => on(c, '/~r').length === 2, 2000);
    s.server.bayou.updateRecord('/fx/AUDUSD', { spread: 3 });
    await eventually(() => on(c, '/~r').length === 3, 2000);
    const [, second, third] = on(c, '/~r').map((m) => m.data as unknown[]);
    expect(Object.values(second?.[3] as Record<string, string>)).toEqual(['spread']);
    expect(third).toHaveLength(3); // already named: no definitions again
  });

  it('refuses client publishes to record subjects', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    const c = await client();
    expect(await c.publish('/fx/EURUSD', { bid: 0 })).toMatchObject({
      successful: false,
      error: '403:/fx/EURUSD:publish_denied',
    });
    expect(() => s.server.bayou.publish('/fx/EURUSD', {})).toThrow(/updateRecord/);
  });
});
