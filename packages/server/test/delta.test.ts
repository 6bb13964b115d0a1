/**
 * Deltas on plain channels (`ext.delta` on subscribe), on a real server over each
 * transport: a first whole message, then merge patches naming their base, which a client
 * applying them in order turns back into exactly what was published; a whole message
 * whenever a delta would not be smaller, after a subscribe again, and on a channel without
 * history positions; with replay, recovered messages and positions alongside.
 */
import { DELTA_FORMAT, EXT_DELTA } from '@bayou/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMergePatch } from '../src/delta/merge-patch.js';
import { type Started, startServer } from './start-server.js';
import { type Msg, TestClient, type Transport } from './test-client.js';

let started: Started | null = null;
const clients: TestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await started?.server.close();
  started = null;
});

/** A price row with many fields, a few of which change per update. */
function row(n: number): Record<string, unknown> {
  const fields: Record<string, unknown> = { symbol: 'ACME', venue: 'XLON', currency: 'GBP', lot: 100 };
  for (let i = 0; i < 20; i++) fields[`f${i}`] = 1000 + i;
  return { ...fields, bid: 100 + n / 100, ask: 100.5 + n / 100, seq: n };
}

/** A message's `ext.delta`. */
const deltaExt = (m: Msg | undefined) =>
  (m?.ext as Record<string, { from?: string; id?: string }> | undefined)?.[EXT_DELTA];

interface Last {
  id: string | null;
  data: unknown;
}

/** Turns what arrives on a delta subscription back into the published data, as a client would. */
function decode(last: Last, m: Msg): unknown {
  const ext = (m.ext as Record<string, { id?: string; from?: string }> | undefined)?.[EXT_DELTA];
  if (ext?.from !== undefined) {
    expect(ext.from).toBe(last.id);
    last.data = applyMergePatch(last.data, m.data);
  } else last.data = m.data;
  last.id = ext?.id ?? null;
  return last.data;
}

async function subscriber(
  transport: Transport,
  channel: string,
  ext?: Record<string, unknown>,
): Promise<TestClient> {
  const c = new TestClient(started?.base as string, transport);
  clients.push(c);
  expect(await c.connect(ext)).toMatchObject({ successful: true });
  const reply = await c.request({
    channel: '/meta/subscribe',
    clientId: c.clientId,
    subscription: channel,
    ext: { [EXT_DELTA]: DELTA_FORMAT },
  });
  expect(reply).toMatchObject({ successful: true, ext: { [EXT_DELTA]: DELTA_FORMAT } });
  return c;
}

async function deliveries(c: TestClient, channel: string, count: number): Promise<Msg[]> {
  await c.waitFor(() => c.deliveries(channel).length >= count);
  return c.deliveries(channel);
}

describe.each(['websocket', 'long-polling'] as const)('deltas over %s', (transport) => {
  it('sends a whole message, then merge patches naming their base, which rebuild every message', async () => {
    started = await startServer();
    const [a, b] = [await subscriber(transport, '/prices/acme'), await subscriber(transport, '/prices/acme')];
    const sent = Array.from({ length: 12 }, (_, n) => row(n));
    for (const data of sent) started.server.bayou.publish('/prices/acme', data);
    for (const c of [a, b] as TestClient[]) {
      const got = await deliveries(c, '/prices/acme', sent.length);
      const last: Last = { id: null, data: undefined };
      expect(got.map((m) => decode(last, m))).toEqual(sent);
      expect(
        got.filter((m) => (m.ext as Record<string, { from?: string }>)[EXT_DELTA]?.from !== undefined),
      ).toHaveLength(11);
      // A delta carries what changed, not the row.
      expect(JSON.stringify(got[5]).length).toBeLessThan(JSON.stringify(got[0]).length / 2);
    }
  });

  it('sends a message whole when its delta would not be smaller, and after a subscribe again', async () => {
    started = await startServer();
    const c = await subscriber(transport, '/chat/room');
    started.server.bayou.publish('/chat/room', { user: 'ann', text: 'hello' });
    started.server.bayou.publish('/chat/room', { user: 'bob', text: 'hi there' });
    const chat = await deliveries(c, '/chat/room', 2);
    expect(chat.map((m) => m.data)).toEqual([
      { user: 'ann', text: 'hello' },
      { user: 'bob', text: 'hi there' },
    ]);
    started.server.bayou.publish('/chat/room', row(1));
    started.server.bayou.publish('/chat/room', row(2));
    const [, , , delta] = await deliveries(c, '/chat/room', 4);
    expect(deltaExt(delta)?.from).toBeDefined();
    await c.request({
      channel: '/meta/subscribe',
      clientId: c.clientId,
      subscription: '/chat/room',
      ext: { [EXT_DELTA]: DELTA_FORMAT },
    });
    started.server.bayou.publish('/chat/room', row(3));
    const again = (await deliveries(c, '/chat/room', 5))[4];
    expect(again?.data).toEqual(row(3));
    expect(deltaExt(again)).toEqual({
      id: expect.any(String),
    });
  });

  it('sends every message whole, unnamed, on a channel without history', async () => {
    started = await startServer({ history: [{ pattern: '/live/**', size: 0 }] });
    const c = await subscriber(transport, '/live/acme');
    for (let n = 0; n < 3; n++) started.server.bayou.publish('/live/acme', row(n));
    const got = await deliveries(c, '/live/acme', 3);
    expect(got.map((m) => m.data)).toEqual([row(0), row(1), row(2)]);
    expect(got.every((m) => m.ext === undefined)).toBe(true);
  });

  it('gives deltas replay positions, and after a recovery starts again from a whole message', async () => {
    started = await startServer();
    const c = await subscriber(transport, '/prices/acme', { replay: true });
    for (let n = 0; n < 3; n++) started.server.bayou.publish('/prices/acme', row(n));
    const got = await deliveries(c, '/prices/acme', 3);
    const ext = got[2]?.ext as Record<string, { offset?: number; from?: string }>;
    expect(ext.replay?.offset).toBe(3);
    expect(ext[EXT_DELTA]?.from).toBeDefined();
    // A new session recovers what it missed since offset 1, then continues with deltas.
    for (let n = 3; n < 5; n++) started.server.bayou.publish('/prices/acme', row(n));
    const next = new TestClient(started.base, transport);
    clients.push(next);
    await next.connect({ replay: true });
    const reply = await next.request({
      channel: '/meta/subscribe',
      clientId: next.clientId,
      subscription: '/prices/acme',
      ext: {
        replay: { '/prices/acme': { offset: 1, epoch: (ext.replay as unknown as { epoch: string }).epoch } },
        [EXT_DELTA]: DELTA_FORMAT,
      },
    });
    expect(reply).toMatchObject({ successful: true, ext: { [EXT_DELTA]: DELTA_FORMAT } });
    for (let n = 5; n < 8; n++) started.server.bayou.publish('/prices/acme', row(n));
    const recovered = await deliveries(next, '/prices/acme', 7);
    const last: Last = { id: null, data: undefined };
    expect(recovered.map((m) => decode(last, m))).toEqual([1, 2, 3, 4, 5, 6, 7].map(row));
  });
});
