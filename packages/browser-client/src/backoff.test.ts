import { describe, expect, it } from 'vitest';
import { Backoff, Pace } from './backoff.js';

describe('Backoff', () => {
  it('doubles the ceiling of the jitter on every attempt up to the maximum', () => {
    const top = new Backoff(100, 1000, () => 0.999999);
    expect([top.next(), top.next(), top.next(), top.next(), top.next()]).toEqual([199, 299, 499, 899, 1000]);
  });

  it('never waits less than the minimum, whatever the jitter draws', () => {
    const bottom = new Backoff(100, 1000, () => 0);
    expect([bottom.next(), bottom.next(), bottom.next()]).toEqual([100, 100, 100]);
  });

  it('spreads delays over the whole window (full jitter)', () => {
    const b = new Backoff(100, 100000);
    const delays = Array.from({ length: 200 }, () => {
      b.reset();
      for (let i = 0; i < 5; i++) b.next();
      return b.next();
    });
    expect(Math.min(...delays)).toBeLessThan(1000);
    expect(Math.max(...delays)).toBeGreaterThan(2500);
    expect(delays.every((d) => d >= 100 && d <= 3300)).toBe(true);
  });

  it('starts over after a reset', () => {
    const b = new Backoff(100, 1000, () => 0.5);
    b.next();
    b.next();
    expect(b.attempts).toBe(2);
    b.reset();
    expect(b.attempts).toBe(0);
    expect(b.next()).toBe(150);
  });
});

describe('Pace: the open timeout', () => {
  it('doubles with each failed attempt, up to connectDeadline, and starts over with the backoff', () => {
    const pace = new Pace(500, 20_000);
    const o = { wsOpenTimeout: 5000, connectDeadline: 30_000 };
    const seen = [1, 2, 3, 4, 5].map(() => {
      const t = pace.open(o);
      pace.next();
      return t;
    });
    expect(seen).toEqual([5000, 10_000, 20_000, 30_000, 30_000]);
    pace.reset();
    expect(pace.open(o)).toBe(5000);
  });
});
