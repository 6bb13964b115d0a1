import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PingWheel, type WheelItem } from './ping-wheel.js';

interface Item extends WheelItem {
  name: string;
}
const item = (name: string): Item => ({ name, wheelSpot: -1 });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PingWheel', () => {
  it('visits each item once per interval, first one interval after it joined', () => {
    const visits: string[] = [];
    const wheel = new PingWheel<Item>(1000, (i) => {
      visits.push(i.name);
      return true;
    });
    const a = item('a');
    wheel.add(a);
    vi.advanceTimersByTime(999);
    expect(visits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(visits).toEqual(['a']);
    vi.advanceTimersByTime(2000);
    expect(visits).toEqual(['a', 'a', 'a']);
    wheel.clear();
  });

  it('spreads items that joined at different times over the interval', () => {
    const at: Record<string, number[]> = {};
    const wheel = new PingWheel<Item>(1000, (i) => {
      const times = at[i.name] ?? [];
      times.push(Date.now());
      at[i.name] = times;
      return true;
    });
    const start = Date.now();
    for (let n = 0; n < 10; n++) {
      wheel.add(item(String(n)));
      vi.advanceTimersByTime(100);
    }
    vi.advanceTimersByTime(2000);
    // Each is visited in its own 100 ms slot, one interval apart.
    for (let n = 0; n < 10; n++) {
      expect(at[String(n)]?.slice(0, 2)).toEqual([start + n * 100 + 1000, start + n * 100 + 2000]);
    }
    wheel.clear();
  });

  it('takes an item off in O(1), keeping the others where they are, and stops its timer when empty', () => {
    const visits: string[] = [];
    const wheel = new PingWheel<Item>(100, (i) => {
      visits.push(i.name);
      return true;
    });
    const items = ['a', 'b', 'c', 'd'].map(item);
    for (const i of items) wheel.add(i);
    expect(wheel.size).toBe(4);
    wheel.remove(items[1] as Item);
    wheel.remove(items[1] as Item);
    expect((items[1] as Item).wheelSpot).toBe(-1);
    expect(wheel.size).toBe(3);
    vi.advanceTimersByTime(100);
    expect(visits.sort()).toEqual(['a', 'c', 'd']);
    for (const i of items) wheel.remove(i);
    expect(wheel.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops an item its visit returns false for, visiting every other one of the slot once', () => {
    const visits: string[] = [];
    const wheel = new PingWheel<Item>(100, (i) => {
      visits.push(i.name);
      return i.name !== 'b' && i.name !== 'd';
    });
    const items = ['a', 'b', 'c', 'd', 'e'].map(item);
    for (const i of items) wheel.add(i);
    vi.advanceTimersByTime(100);
    expect(visits.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(wheel.size).toBe(3);
    visits.length = 0;
    vi.advanceTimersByTime(100);
    expect(visits.sort()).toEqual(['a', 'c', 'e']);
    wheel.clear();
    expect(vi.getTimerCount()).toBe(0);
  });
});
