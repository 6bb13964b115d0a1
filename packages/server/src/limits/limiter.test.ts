import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BayouError } from '../errors.js';
import { Limiter, resolveLimits } from './limiter.js';
import { fullBucket, isFull, take } from './token-bucket.js';

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(1_000_000);
});
afterEach(() => vi.useRealTimers());

describe('token bucket', () => {
  const spec = { rate: 10, burst: 3 };

  it('allows a burst, then one token per 1/rate s, and says how long to wait', () => {
    const b = fullBucket(spec, Date.now());
    expect([take(b, spec, Date.now()), take(b, spec, Date.now()), take(b, spec, Date.now())]).toEqual([
      0, 0, 0,
    ]);
    expect(take(b, spec, Date.now())).toBe(100);
    vi.advanceTimersByTime(99);
    expect(take(b, spec, Date.now())).toBe(1);
    vi.advanceTimersByTime(1);
    expect(take(b, spec, Date.now())).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(isFull(b, spec, Date.now())).toBe(true);
    expect(b.tokens).toBe(3);
  });

  it('never fills past the burst, survives a clock going back, refuses a cost above the burst', () => {
    const b = fullBucket(spec, Date.now());
    vi.advanceTimersByTime(60_000);
    expect(take(b, spec, Date.now(), 3)).toBe(0);
    expect(take(b, spec, Date.now())).toBe(100);
    expect(take(b, spec, Date.now() - 5000)).toBeGreaterThan(0);
    expect(take(b, spec, Date.now(), 4)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('Limiter', () => {
  it('limits publishes per session with a 429 reply advising when to retry', () => {
    const l = new Limiter({ publishRate: 2, publishBurst: 2 });
    const a = {};
    const b = {};
    expect(l.checkPublish(a, '/c')).toBeNull();
    expect(l.checkPublish(a, '/c')).toBeNull();
    expect(l.checkPublish(a, '/c')).toEqual({
      error: '429:/c:rate_limited',
      advice: { reconnect: 'retry', interval: 500 },
    });
    expect(l.checkPublish(b, '/c')).toBeNull(); // another session has its own bucket
    vi.advanceTimersByTime(500);
    expect(l.checkPublish(a, '/c')).toBeNull();
    expect(l.stats.publishRefused).toBe(1);
  });

  it('caps concurrent sessions per IP and frees a slot when one closes', () => {
    const l = new Limiter({ maxSessionsPerIp: 2, handshakeRate: 0 });
    for (let i = 0; i < 2; i++) {
      expect(l.checkHandshake('10.0.0.1')).toBeNull();
      l.sessionOpened('10.0.0.1');
    }
    expect(l.checkHandshake('10.0.0.1')).toEqual({
      error: '403:2:session_limit',
      advice: { reconnect: 'handshake', interval: 5000 },
    });
    expect(l.checkHandshake('10.0.0.2')).toBeNull();
    l.sessionClosed('10.0.0.1');
    expect(l.checkHandshake('10.0.0.1')).toBeNull();
    expect(l.stats.sessionsRefused).toBe(1);
  });

  it('limits handshakes per second per IP', () => {
    const l = new Limiter({ handshakeRate: 1, handshakeBurst: 2 });
    expect(l.checkHandshake('::1')).toBeNull();
    expect(l.checkHandshake('::1')).toBeNull();
    expect(l.checkHandshake('::1')).toEqual({
      error: '429:handshake:rate_limited',
      advice: { reconnect: 'handshake', interval: 1000 },
    });
    vi.advanceTimersByTime(1000);
    expect(l.checkHandshake('::1')).toBeNull();
    expect(l.stats.handshakesRefused).toBe(1);
  });

  it('forgets an IP once it has no session and its bucket refilled, without timers', () => {
    const l = new Limiter({ handshakeRate: 10, handshakeBurst: 10 });
    l.checkHandshake('1.1.1.1');
    l.sessionOpened('1.1.1.1');
    l.checkHandshake('2.2.2.2');
    expect(l.trackedIps).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    l.prune();
    expect(l.trackedIps).toBe(2);
    vi.advanceTimersByTime(1000);
    l.prune();
    expect(l.trackedIps).toBe(1);
    expect(l.sessionsOf('1.1.1.1')).toBe(1);
    l.sessionClosed('1.1.1.1');
    expect(l.trackedIps).toBe(0);
  });

  it('switches a limit off with 0 and ignores requests without an address', () => {
    const l = new Limiter({ publishRate: 0, maxSessionsPerIp: 0, handshakeRate: 0 });
    for (let i = 0; i < 10_000; i++) expect(l.checkPublish(l, '/x')).toBeNull();
    for (let i = 0; i < 1000; i++) {
      expect(l.checkHandshake('3.3.3.3')).toBeNull();
      l.sessionOpened('3.3.3.3');
    }
    expect(l.trackedIps).toBe(0);
    expect(new Limiter({ handshakeRate: 1, handshakeBurst: 1 }).checkHandshake(undefined)).toBeNull();
  });

  it('refuses unknown and bad options, naming them', () => {
    expect(() => resolveLimits({ publishRat: 1 } as never)).toThrow(
      'unknown option(s) in limits: publishRat (did you mean publishRate?)',
    );
    expect(() => resolveLimits({ publishRate: -1 })).toThrow(BayouError);
    expect(() => resolveLimits({ publishBurst: 0 })).toThrow(/publishBurst/);
    expect(resolveLimits({ publishRate: undefined }).publishRate).toBe(2000);
  });
});
