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
