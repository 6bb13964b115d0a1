import { describe, expect, it } from 'vitest';
import { LONG_POLLING_CARRIER } from '../transports/carrier-kinds.js';
import { Session, type SessionHost } from './session.js';

/** A host that records overflows and answers them as `room` says (room made, or session dropped). */
function host(maxQueuedMessages: number, maxQueuedBytes: number, room = false) {
  const overflows: number[] = [];
  const h: SessionHost = {
    scheduleFlush: () => undefined,
    overflow: (s) => {
      overflows.push(s.queuedBytes);
      if (room) s.drain();
      return room;
    },
    maxQueuedMessages,
    maxQueuedBytes,
  };
  return { overflows, session: new Session('n.s', LONG_POLLING_CARRIER, h, Number.POSITIVE_INFINITY) };
}

describe('Session queue bytes', () => {
  it('counts the characters queued through enqueue, insert and requeue, and none after drain', () => {
    const { session } = host(100, 1_000);
    session.enqueue('{"a":1}');
    session.enqueue('{"b":22}');
    session.insert(1, '{"c":333}');
    expect(session.queue).toEqual(['{"a":1}', '{"c":333}', '{"b":22}']);
    expect(session.queuedBytes).toBe(7 + 9 + 8);
    const out = session.drain();
    expect(session.queuedBytes).toBe(0);
    session.enqueue('{"d":4}');
    session.requeue(out);
    expect(session.queue).toHaveLength(4);
    expect(session.queuedBytes).toBe(7 + 9 + 8 + 7);
  });

  it('shares one empty queue among idle sessions, and hands every drain an array of its own', () => {
    const a = host(100, 1_000).session;
    const b = host(100, 1_000).session;
    // Nothing queued: both hold the same (frozen) empty array, none of their own.
    expect(a.queue).toBe(b.queue);
    expect(Object.isFrozen(a.queue)).toBe(true);
    const empty = a.drain();
    empty.push('mine');
    expect(a.drain()).not.toBe(empty);
    expect(b.queue).toHaveLength(0);
    a.insert(0, '{"x":1}');
    expect(a.queue).toEqual(['{"x":1}']);
    expect(b.queue).toHaveLength(0);
    expect(a.drain()).toEqual(['{"x":1}']);
    expect(a.queue).toBe(b.queue);
    b.requeue(['{"y":2}']);
    expect(b.queue).toEqual(['{"y":2}']);
    expect(a.queue).toHaveLength(0);
  });

  it('asks the host for room once the queue holds maxQueuedBytes, far below maxQueuedMessages', () => {
    const { session, overflows } = host(10_000, 100);
    const message = `"${'x'.repeat(38)}"`; // 40 characters
    for (let i = 0; i < 5; i++) session.enqueue(message);
    // 40 + 40 + 40 = 120 ≥ 100 when the fourth arrives: refused (the host dropped the session).
    expect(overflows).toEqual([120, 120]);
    expect(session.queue).toHaveLength(3);
  });

  it('keeps the message cap: the byte cap never lets more than maxQueuedMessages in', () => {
    const { session, overflows } = host(2, 1_000_000);
    for (let i = 0; i < 3; i++) session.enqueue('1');
    expect(overflows).toEqual([2]);
    expect(session.queue).toEqual(['1', '1']);
  });

  it('takes the message once the host made room (a WebSocket flushed early)', () => {
    const { session, overflows } = host(10_000, 10, true);
    session.enqueue('0123456789');
    session.enqueue('abc');
    expect(overflows).toEqual([10]);
    expect(session.queue).toEqual(['abc']);
    expect(session.queuedBytes).toBe(3);
  });
});
