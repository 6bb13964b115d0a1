/**
 * Recovery with the replay extension, and record subscription options, under fake timers
 * against the in-process fake Bayeux server.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { tick, useFakeServer } from '../test/fake-client-harness.js';
import type { FakeBayeuxServer } from '../test/fake-server.js';
import type { BayouClientOptions, GapInfo, Message } from './index.js';

let server: FakeBayeuxServer;
const harness = useFakeServer();
const client = harness.client;
beforeEach(() => {
  server = harness.server();
});

describe('recovery (replay extension)', () => {
  function setup(options: BayouClientOptions = {}) {
    server.replay = true;
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 200, ...options });
    const gaps: GapInfo[] = [];
    const statuses: string[] = [];
    c.on('gap', (g) => gaps.push(g));
    c.on('subscription', (channel, status) => statuses.push(`${channel} ${status}`));
    return { c, gaps, statuses };
  }
  /** Connects `c` and subscribes it to /news; `got` collects the data delivered there. */
  const subscribeNews = async (c: ReturnType<typeof setup>['c']) => {
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    const sub = c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    return { got, sub };
  };
  const outage = async (during: () => void) => {
    server.setDown(true);
    await tick(10);
    during();
    server.setDown(false);
    await tick(1000);
  };

  it('recovers what a subscription missed while its session was gone, in order, once', async () => {
    const { c, gaps, statuses } = setup();
    const { got, sub } = await subscribeNews(c);
    expect(sub.status).toBe('live');
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    await outage(() => {
      server.publish('/news', 3);
      server.publish('/news', 4);
    });
    expect(c.state).toBe('connected');
    server.publish('/news', 5);
    await tick(20);
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(gaps).toEqual([]);
    expect(statuses).toEqual(['/news live', '/news recovering', '/news live']);
    const resubscribe = server.received.filter((m) => m.channel === '/meta/subscribe').at(-1);
    expect(resubscribe?.ext?.replay).toEqual({ '/news': { offset: 2, epoch: 'e0-/news' } });
  });

  it('drops a message it has seen by its position, and accepts a new epoch', async () => {
    const { c } = setup();
    const { got } = await subscribeNews(c);
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    const [first, second] = (server.history.get('/news')?.messages ?? []).map((e) => e.message);
    for (const socket of server.sockets) socket.deliver([first as Message, second as Message]);
    await tick(20);
    expect(got).toEqual([1, 2]);
    server.forgetHistory();
    server.publish('/news', 3);
    await tick(20);
    expect(got).toEqual([1, 2, 3]);
  });

  it('emits gap with the range and marks the subscription when history cannot cover it', async () => {
    const { c, gaps } = setup();
    server.historySize = 2;
    const { got, sub } = await subscribeNews(c);
    server.publish('/news', 1);
    await tick(20);
    await outage(() => {
      for (let n = 2; n <= 5; n++) server.publish('/news', n);
    });
    expect(gaps).toEqual([
      { channel: '/news', from: { offset: 1, epoch: 'e0-/news' }, to: { offset: 5, epoch: 'e0-/news' } },
    ]);
    expect(sub.status).toBe('gap');
    server.publish('/news', 6);
    await tick(20);
    expect(got).toEqual([1, 6]);
  });

  it('reports a gap the server tells between deliveries (/meta/gap), on a channel and a pattern', async () => {
    const { c, gaps, statuses } = setup();
    const { got, sub } = await subscribeNews(c);
    const all = c.subscribe('/ticks/*', () => undefined);
    await tick(20);
    server.publish('/news', 1);
    await tick(20);
    const notice: Message = {
      channel: '/meta/gap',
      ext: { replay: { '/news': { recovered: false }, '/ticks/*': { recovered: false }, '/other': {} } },
    };
    for (const socket of server.sockets) socket.deliver([notice]);
    await tick(20);
    expect(gaps).toEqual([
      { channel: '/news', from: { offset: 1, epoch: 'e0-/news' }, to: null },
      { channel: '/ticks/*', from: null, to: null },
    ]);
    expect([sub.status, all.status]).toEqual(['gap', 'gap']);
    expect(statuses.slice(-2)).toEqual(['/news gap', '/ticks/* gap']);
    server.publish('/news', 2);
    await tick(20);
    expect(got).toEqual([1, 2]); // the notice is no delivery
  });

  it('reports a gap, not silence, when a restart lost the history, and follows the new epoch', async () => {
    const { c, gaps } = setup();
    const { got } = await subscribeNews(c);
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    await outage(() => server.forgetHistory());
    expect(gaps).toEqual([
      { channel: '/news', from: { offset: 2, epoch: 'e0-/news' }, to: { offset: 0, epoch: 'e1-/news' } },
    ]);
    server.publish('/news', 'new epoch');
    await tick(20);
    expect(got).toEqual([1, 2, 'new epoch']);
  });

  it('sends no position for a wildcard, and starts afresh after an unsubscribe', async () => {
    const { c } = setup();
    await Promise.all([c.connect(), tick(50)]);
    const wild = c.subscribe('/chat/*', () => {});
    const room = c.subscribe('/chat/room', () => {});
    await tick(20);
    server.publish('/chat/room', 1);
    await tick(20);
    room.unsubscribe();
    await tick(20);
    c.subscribe('/chat/room', () => {});
    await tick(20);
    await outage(() => {});
    const subs = server.received.filter((m) => m.channel === '/meta/subscribe');
    const extOf = (name: string) => subs.filter((m) => m.subscription === name).map((m) => m.ext?.replay);
    expect(extOf('/chat/*')).toEqual([undefined, undefined]);
    // After the unsubscribe the position was forgotten; the next subscribe learnt offset 1 again.
    expect(extOf('/chat/room')).toEqual([
      undefined,
      undefined,
      { '/chat/room': { offset: 1, epoch: 'e0-/chat/room' } },
    ]);
    expect(wild.status).toBe('live');
  });

  it('works as a plain client against a server without the extension, or with recover: false', async () => {
    for (const [replay, recover] of [
      [false, true],
      [true, false],
    ] as const) {
      server = harness.renew();
      const { c, gaps, statuses } = setup({ recover });
      server.replay = replay;
      const { got } = await subscribeNews(c);
      await outage(() => server.publish('/news', 'missed'));
      server.publish('/news', 'live');
      await tick(20);
      expect(got).toEqual(['live']);
      expect(gaps).toEqual([]);
      expect(statuses).toEqual(['/news live', '/news recovering', '/news live']);
      const sent = (channel: string) =>
        server.received.filter((m) => m.channel === channel).some((m) => m.ext?.replay !== undefined);
      expect(sent('/meta/subscribe')).toBe(false);
      expect(sent('/meta/handshake')).toBe(recover);
      await Promise.all([c.disconnect(), tick(50)]);
    }
  });
});

describe('record options', () => {
  const recordExts = () =>
    server.received.filter((m) => m.channel === '/meta/subscribe').map((m) => m.ext?.record ?? null);

  it('subscribes with the merge of the open listeners options, again whenever the merge changes', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const a = c.record('/fx/A', { fields: ['bid'], maxFrequency: 1 }, () => {});
    await tick(20);
    const b = c.record('/fx/A', { fields: ['ask', 'bid'], maxFrequency: 5 }, () => {});
    await tick(20);
    const same = c.record('/fx/A', { fields: ['bid'], maxFrequency: 1 }, () => {});
    await tick(20);
    b.close();
    await tick(20);
    expect(recordExts()).toEqual([
      { fields: ['bid'], maxFrequency: 1 },
      { fields: ['ask', 'bid'], maxFrequency: 5 },
      { fields: ['bid'], maxFrequency: 1 },
    ]);
    expect(server.count('/meta/unsubscribe')).toBe(2);
    expect(same.store).toBe(a.store);
    expect(b.store).not.toBe(a.store);
    const all = c.record('/fx/A', { maxFrequency: 2 }, () => {});
    await tick(20);
    expect(recordExts().at(-1)).toEqual({ maxFrequency: 2 });
    a.close();
    same.close();
    all.close();
    await tick(20);
    expect(server.count('/meta/unsubscribe')).toBe(4);
  });

  it('never applies a delta to an empty image, nor to the image of a former session', async () => {
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 200 });
    await Promise.all([c.connect(), tick(50)]);
    const handle = c.record('/fx/A', {}, () => {});
    await tick(20);
    const send = (data: object, r: 's' | 'd') => {
      for (const socket of server.sockets) socket.deliver([{ channel: '/fx/A', data, ext: { r } }]);
    };
    send({ bid: 1 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toBeNull();
    send({ bid: 1, ask: 2 }, 's');
    send({ bid: 3 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 3, ask: 2 });
    server.restart();
    await tick(1000);
    expect(c.state).toBe('connected');
    send({ bid: 9 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 3, ask: 2 });
    send({ bid: 4, ask: 5 }, 's');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 4, ask: 5 });
    handle.close();
  });

  it('rejects record options of the wrong type', () => {
    const c = client();
    expect(() => c.record('/fx/A', { fields: 'bid' as never }, () => {})).toThrow(TypeError);
    expect(() => c.record('/fx/A', { maxFrequency: 0 }, () => {})).toThrow(TypeError);
  });
});
