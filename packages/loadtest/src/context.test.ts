import { describe, expect, it } from 'vitest';
import { assignGroups, groupSizes, seededRandom } from './context.js';

describe('room assignment', () => {
  it('gives every client k distinct rooms, the same for the same seed', () => {
    const a = assignGroups(500, 100, 10, 42);
    const b = assignGroups(500, 100, 10, 42);
    expect(a.map((g) => Array.from(g))).toEqual(b.map((g) => Array.from(g)));
    for (const g of a) {
      expect(new Set(g).size).toBe(10);
      for (const r of g) expect(r).toBeLessThan(100);
    }
    expect(assignGroups(5, 100, 10, 43).map((g) => Array.from(g))).not.toEqual(
      a.slice(0, 5).map((g) => Array.from(g)),
    );
  });

  it('counts members per room so that the sizes add up to every membership', () => {
    const groups = assignGroups(1000, 100, 10, 1);
    const sizes = groupSizes(groups, 100);
    expect(sizes.reduce((n, s) => n + s, 0)).toBe(10_000);
    // Random assignment: each room near the mean fan-out of 100.
    expect(Math.min(...sizes)).toBeGreaterThan(50);
    expect(Math.max(...sizes)).toBeLessThan(150);
  });

  it('draws numbers in [0, 1)', () => {
    const rnd = seededRandom(7);
    for (let i = 0; i < 1000; i++) {
      const x = rnd();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});
