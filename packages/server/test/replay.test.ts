/** The replay extension: positions on deliveries, recovery on resubscribe, and its limits. */
import { afterEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { eventually, type Msg, TestClient, type Transport } from './test-client.js';

interface Position {
  offset: number;
  epoch: string;
}
const positionOf = (m: Msg): Position => (m.ext as { replay: Position }).replay;
const data = (c: TestClient, channel: string) => c.deliveries(channel).map((m) => m.data);

describe.each<Transport>(['websocket', 'long-polling'])('replay over %s', (transport) => {
  let s: Started;
  const clients: TestClient[] = [];
  async function client(replay = true, base = s.base): Promise<TestClient> {
    const c = new TestClient(base, transport);
    clients.push(c);
    const hs = await c.connect(replay ? { replay: true } : undefined);
    expect(hs.successful).toBe(true);
    if (replay) expect((hs.ext as { replay?: unknown } | undefined)?.replay).toBe(true);
    return c;
  }
  const subscribe = (c: TestClient, channel: string, since?: Position) =>
    c.request({
      channel: '/meta/subscribe',
      clientId: c.clientId,
      subscription: channel,
      ...(since ? { ext: { replay: { [channel]: since } } } : {}),
    });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.server.close();
  });

  it('gives positions to replay clients only; plain clients see the message unchanged', async () => {
    s = await startServer();
    const r = await client(true);
    const plain = await client(false);
    const reply = await subscribe(r, '/p');
    expect((reply.ext as { replay: Record<string, unknown> }).replay['/p']).toMatchObject({
      recovered: true,
      offset: 0,
    });
    await plain.subscribe('/p');
    await s.server.bayou.publish('/p', 'a');
    await s.server.bayou.publish('/p', 'b');
    await eventually(() => r.deliveries('/p').length === 2 && plain.deliveries('/p').length === 2);
    const positions = r.deliveries('/p').map(positionOf);
    expect(positions.map((p) => p.offset)).toEqual([1, 2]);
    expect(positions[0]?.epoch).toBe(positions[1]?.epoch);
    expect(plain.deliveries('/p').map((m) => m.ext)).toEqual([undefined, undefined]);
  });

  it('recovers what a client missed after its session expired, in order, once, before live messages', async () => {
    s = await startServer();
    const first = await client();
    await subscribe(first, '/chat');
    for (const n of [1, 2, 3]) await s.server.bayou.publish('/chat', n);
    await eventually(() => first.deliveries('/chat').length === 3);
    const last = positionOf(first.deliveries('/chat').at(-1) as Msg);
    await first.close(); // the laptop lid closes; the session is forgotten
    for (const n of [4, 5, 6]) await s.server.bayou.publish('/chat', n);
    const second = await client();
    const pending = subscribe(second, '/chat', last);
    const reply = await pending;
    await s.server.bayou.publish('/chat', 7);
    expect((reply.ext as { replay: Record<string, unknown> }).replay['/chat']).toMatchObject({
      recovered: true,
      epoch: last.epoch,
      offset: 6,
    });
    await eventually(() => second.deliveries('/chat').length >= 4);
    expect(data(second, '/chat')).toEqual([4, 5, 6, 7]);
    expect(second.deliveries('/chat').map((m) => positionOf(m).offset)).toEqual([4, 5, 6, 7]);
  });

  it('says recovered: false when the gap is beyond the history window, and replays nothing', async () => {
    s = await startServer({ historySize: 3 });
    const first = await client();
    await subscribe(first, '/small');
    await s.server.bayou.publish('/small', 0);
    await eventually(() => first.deliveries('/small').length === 1);
    const last = positionOf(first.deliveries('/small')[0] as Msg);
    for (let n = 1; n <= 10; n++) await s.server.bayou.publish('/small', n);
    const second = await client();
    const reply = await subscribe(second, '/small', last);
    expect((reply.ext as { replay: Record<string, unknown> }).replay['/small']).toEqual({
      recovered: false,
      offset: 11,
      epoch: last.epoch,
    });
    await s.server.bayou.publish('/small', 'live');
    await eventually(() => second.deliveries('/small').length === 1);
    expect(data(second, '/small')).toEqual(['live']);
  });

  it('keeps no history where a rule turns it off, and says recovered: false after a restart (new epoch)', async () => {
    s = await startServer({ history: [{ pattern: '/ticks/**', size: 0 }] });
    const c = await client();
    await subscribe(c, '/ticks/x');
    await subscribe(c, '/kept');
    await s.server.bayou.publish('/ticks/x', 1);
    await s.server.bayou.publish('/kept', 1);
    await eventually(() => c.deliveries('/ticks/x').length === 1 && c.deliveries('/kept').length === 1);
    expect(c.deliveries('/ticks/x')[0]?.ext).toBeUndefined();
    const kept = positionOf(c.deliveries('/kept')[0] as Msg);
    await c.close();
    await s.server.close();
    s = await startServer();
    const after = await client();
    const reply = await subscribe(after, '/kept', kept);
    const info = (reply.ext as { replay: Record<string, { recovered: boolean; epoch: string }> }).replay[
      '/kept'
    ];
    expect(info?.recovered).toBe(false);
    expect(info?.epoch).not.toBe(kept.epoch);
  });
});
