import { describe, expect, it } from 'vitest';
import { type DropReason, RecencyIndex, type Recent } from './recency-index.js';

interface Entry extends Recent<Entry> {}

const entry = (key: string, lastAt: number, ttlMs: number): Entry => ({
  key,
  lastAt,
  ttlMs,
  older: null,
  newer: null,
});

function index(max: number) {
  const dropped: [string, DropReason][] = [];
  const i = new RecencyIndex<Entry>(max, (e, why) => dropped.push([e.key, why]));
  return { i, dropped };
}

describe('RecencyIndex', () => {
  it('tells why each entry left, and drops no more than the budget per sweep', () => {
    const { i, dropped } = index(3);
    for (let n = 0; n < 4; n++) i.add(entry(`k${n}`, n, 100));
    expect(dropped).toEqual([['k0', 'evicted']]);
    expect(i.sweep(1000, 2)).toBe(2);
    expect(i.size).toBe(1);
    expect(i.sweep(1000, 2)).toBe(1);
    expect(dropped).toEqual([
      ['k0', 'evicted'],
      ['k1', 'expired'],
      ['k2', 'expired'],
      ['k3', 'expired'],
    ]);
    expect({ expired: i.expired, evicted: i.evicted, size: i.size }).toEqual({
      expired: 3,
      evicted: 1,
      size: 0,
    });
  });

  it('moves a touched entry to its new time-to-live and to the most recent end', () => {
    const { i, dropped } = index(10);
    const a = entry('a', 0, 100);
    i.add(a);
    i.add(entry('b', 10, 100));
    i.touch(a, 1000, 20);
    i.sweep(200, 10);
    expect(dropped).toEqual([['b', 'expired']]);
    expect(i.get('a')).toBe(a);
    i.sweep(1020, 10);
    expect(i.size).toBe(0);
  });
});
