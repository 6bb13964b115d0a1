import { describe, expect, it, vi } from 'vitest';
import { ThrottleWheel } from './throttle-wheel.js';

describe('ThrottleWheel', () => {
  it('fires each item once, no earlier than its delay, and stops its timer when empty', () => {
    vi.useFakeTimers();
    try {
      const fired: string[] = [];
      const wheel = new ThrottleWheel<string>(10, (x) => fired.push(`${x}@${Date.now()}`));
      const t0 = Date.now();
      wheel.schedule('a', 25);
      wheel.schedule('b', 25);
      wheel.schedule('c', 100);
      expect(wheel.size).toBe(3);
      vi.advanceTimersByTime(20);
      expect(fired).toEqual([]);
      vi.advanceTimersByTime(20);
      expect(fired.map((f) => f.split('@')[0])).toEqual(['a', 'b']);
      for (const f of fired) expect(Number(f.split('@')[1]) - t0).toBeGreaterThanOrEqual(25);
      vi.advanceTimersByTime(100);
      expect(fired.map((f) => f.split('@')[0])).toEqual(['a', 'b', 'c']);
      expect(wheel.size).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('ThrottleWheel after a long idle time', () => {
  it('visits only the slots that hold items, not every slot since it last ran', () => {
    vi.useFakeTimers();
    const gets = vi.spyOn(Map.prototype, 'get');
    try {
      const fired: string[] = [];
      const wheel = new ThrottleWheel<string>(10, (x) => fired.push(x));
      wheel.schedule('early', 10);
      vi.advanceTimersByTime(30);
      expect(fired).toEqual(['early']);
      // A day without anything scheduled: no timer runs meanwhile.
      vi.setSystemTime(Date.now() + 86_400_000);
      wheel.schedule('late', 20);
      gets.mockClear();
      vi.advanceTimersByTime(40);
      expect(fired).toEqual(['early', 'late']);
      // A walk over the idle day would look up 8.6 million empty slots.
      expect(gets.mock.calls.length).toBeLessThan(100);
    } finally {
      gets.mockRestore();
      vi.useRealTimers();
    }
  });

  it('fires what was due when the event loop stalled far past it', () => {
    const fired: string[] = [];
    const wheel = new ThrottleWheel<string>(10, (x) => fired.push(x));
    const now = Date.now();
    wheel.schedule('a', 10);
    wheel.schedule('b', 50);
    wheel.advance(now + 3_600_000);
    expect(fired).toEqual(['a', 'b']);
    expect(wheel.size).toBe(0);
    wheel.stop();
  });
});
