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
});
