import { describe, expect, it } from 'vitest';
import { DeadlineQueue } from './deadline-queue.js';

describe('DeadlineQueue', () => {
  it('hands over exactly the items that are due, oldest first, and keeps the rest', () => {
    const q = new DeadlineQueue<string>(100);
    q.add('a', 0);
    q.add('b', 10);
    q.add('c', 50);
    const due: string[] = [];
    q.expire(99, (x) => due.push(x));
    expect(due).toEqual([]);
    q.expire(110, (x) => due.push(x));
    expect(due).toEqual(['a', 'b']);
    expect(q.size).toBe(1);
    q.expire(1_000, (x) => due.push(x));
    expect(due).toEqual(['a', 'b', 'c']);
    expect(q.size).toBe(0);
  });

  it('holds no more than what arrived within one timeout once swept (its memory is bounded)', () => {
    const q = new DeadlineQueue<number>(10);
    let swept = 0;
    for (let t = 0; t < 100_000; t++) {
      q.add(t, t);
      if (t % 5 === 0) q.expire(t, () => swept++);
      expect(q.size).toBeLessThanOrEqual(16);
    }
    expect(swept).toBeGreaterThan(99_000);
  });

  it('takes at most `limit` due items per call, the oldest first, leaving the rest for the next', () => {
    const q = new DeadlineQueue<number>(10);
    for (let i = 0; i < 5; i++) q.add(i, 0);
    const due: number[] = [];
    q.expire(100, (x) => due.push(x), 2);
    expect(due).toEqual([0, 1]);
    q.expire(100, (x) => due.push(x), 2);
    q.expire(100, (x) => due.push(x), 2);
    expect(due).toEqual([0, 1, 2, 3, 4]);
  });

  it('uses its slots again: items added back as they fall due allocate no new arrays, and it shrinks once emptied', () => {
    const q = new DeadlineQueue<number>(100);
    for (let i = 0; i < 5000; i++) q.add(i, 0);
    const internals = q as unknown as { items: unknown[]; deadlines: Float64Array };
    const { items, deadlines } = internals;
    const seen: number[] = [];
    // Every item is due and added again, 20 times over: same arrays, same order.
    for (let round = 1; round <= 20; round++) {
      q.expire(round * 100, (x) => {
        seen.push(x);
        q.add(x, round * 100);
      });
    }
    expect(internals.items).toBe(items);
    expect(internals.deadlines).toBe(deadlines);
    expect(seen.length).toBe(100_000);
    expect(seen.slice(5000, 5005)).toEqual([0, 1, 2, 3, 4]);
    expect(q.size).toBe(5000);
    // Emptied: halved down to its floor, not kept at its largest.
    q.expire(10_000, () => {});
    q.expire(10_000, () => {});
    q.expire(10_000, () => {});
    expect(q.size).toBe(0);
    expect(internals.items.length).toBe(1024);
  });

  it('keeps the order of its items across growing while a sweep adds', () => {
    const q = new DeadlineQueue<number>(10);
    for (let i = 0; i < 16; i++) q.add(i, 0);
    const due: number[] = [];
    q.expire(10, (x) => {
      due.push(x);
      // Two back for each one taken: the ring grows in the middle of the sweep.
      if (x < 16) {
        q.add(x + 100, 5);
        q.add(x + 200, 5);
      }
    });
    expect(due).toEqual(Array.from({ length: 16 }, (_, i) => i));
    q.expire(15, (x) => due.push(x));
    expect(due.slice(16)).toEqual(Array.from({ length: 16 }, (_, i) => [i + 100, i + 200]).flat());
  });
});
