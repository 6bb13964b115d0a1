import { describe, expect, it } from 'vitest';
import { type EnqueueHook, Session, type SessionHost } from '../session/session.js';
import { WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import { SubscriptionIndex } from './subscription-index.js';

const host: SessionHost = {
  scheduleFlush: () => undefined,
  overflow: () => false,
  maxQueuedMessages: 100,
  maxQueuedBytes: Number.POSITIVE_INFINITY,
};
const pub = (channel: string, payload: string) => ({ channel, payload, position: null });
const session = (id: string) => new Session(id, WEBSOCKET_CARRIER, host, Number.POSITIVE_INFINITY);

describe('SubscriptionIndex', () => {
  it('delivers once per session however many of its patterns match', () => {
    const index = new SubscriptionIndex();
    const a = session('a');
    for (const name of ['/x/y', '/x/*', '/x/**', '/**']) index.add(name, a);
    expect(index.deliver(pub('/x/y', '"m"'))).toBe(1);
    expect(a.queue).toEqual(['"m"']);
  });

  it('reaches only the sessions whose names match', () => {
    const index = new SubscriptionIndex();
    const [a, b, c] = [session('a'), session('b'), session('c')];
    index.add('/x/y', a);
    index.add('/x/*', b);
    index.add('/z/**', c);
    expect(index.deliver(pub('/x/y', '1'))).toBe(2);
    expect(index.deliver(pub('/x/y/z', '2'))).toBe(0);
    expect(index.deliver(pub('/z/1/2', '3'))).toBe(1);
    expect([a.queue, b.queue, c.queue]).toEqual([['1'], ['1'], ['3']]);
  });

  it('reports first and last subscribers and cleans up empty names', () => {
    const index = new SubscriptionIndex();
    const [a, b] = [session('a'), session('b')];
    expect(index.add('/q', a)).toBe(true);
    expect(index.add('/q', b)).toBe(false);
    expect(index.subscriberCount('/q')).toBe(2);
    expect(index.remove('/q', a)).toBe(false);
    expect(index.remove('/q', b)).toBe(true);
    expect(index.remove('/q', b)).toBe(false);
    expect(index.add('/q', b)).toBe(true); // the emptied name was dropped: first subscriber again
  });

  it('passes a publication through the enqueue hooks of the sessions that have them, building a variant once', () => {
    const index = new SubscriptionIndex();
    const [plain, tagged1, tagged2, holder] = [session('p'), session('t1'), session('t2'), session('h')];
    let builds = 0;
    const tag: EnqueueHook = {
      name: 'tag',
      beforeEnqueue: (_s, d) =>
        d.once(tag, (p) => {
          builds++;
          return `${p.payload}!`;
        }),
    };
    const taken: string[] = [];
    const hold: EnqueueHook = {
      name: 'hold',
      beforeEnqueue: (_s, d) => {
        taken.push(d.json);
        return null;
      },
    };
    const pass: EnqueueHook = { name: 'pass', beforeEnqueue: () => undefined };
    tagged1.addEnqueueHook(pass);
    tagged1.addEnqueueHook(tag);
    tagged2.addEnqueueHook(tag);
    holder.addEnqueueHook(hold);
    for (const s of [plain, tagged1, tagged2, holder]) index.add('/c', s);
    // The held one is not counted as reached.
    expect(index.deliver(pub('/c', '"m"'))).toBe(3);
    expect([plain.queue, tagged1.queue, tagged2.queue, holder.queue]).toEqual([
      ['"m"'],
      ['"m"!'],
      ['"m"!'],
      [],
    ]);
    expect(builds).toBe(1);
    expect(taken).toEqual(['"m"']);
    // Without its hooks a session is back on the plain path.
    holder.removeEnqueueHook(hold);
    expect(holder.enqueueHooks).toBeNull();
    expect(index.deliver(pub('/c', '"n"'))).toBe(4);
    expect(holder.queue).toEqual(['"n"']);
    expect(builds).toBe(2);
  });
});
