import { describe, expect, it } from 'vitest';
import { LoginLimiter } from './login-limiter.js';

describe('LoginLimiter', () => {
  it('blocks an IP past maxFailures until its window ends, and only that IP', () => {
    const limiter = new LoginLimiter({ maxFailures: 3, windowMs: 1000, maxTracked: 100 });
    for (let i = 0; i < 3; i++) {
      expect(limiter.blockedFor('a', 0)).toBe(0);
      limiter.failed('a', 0);
    }
    expect(limiter.blockedFor('a', 400)).toBe(600);
    expect(limiter.blockedFor('b', 400)).toBe(0);
    expect(limiter.blockedFor('a', 1000)).toBe(0);
    expect(limiter.size).toBe(0);
  });

  it('keeps at most maxTracked IPs, forgetting the oldest window first', () => {
    const limiter = new LoginLimiter({ maxFailures: 1, windowMs: 60_000, maxTracked: 50 });
    for (let i = 0; i < 200; i++) limiter.failed(`10.0.0.${i}`, i);
    expect(limiter.size).toBe(50);
    expect(limiter.blockedFor('10.0.0.0', 300)).toBe(0);
    expect(limiter.blockedFor('10.0.0.199', 300)).toBeGreaterThan(0);
  });
});
