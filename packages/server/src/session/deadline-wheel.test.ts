import { describe, expect, it } from 'vitest';
import { DeadlineWheel } from './deadline-wheel.js';

interface Item {
  name: string;
  deadline: number;
  deadlineSpot: number;
}

const item = (name: string, deadline: number): Item => ({ name, deadline, deadlineSpot: -1 });
const names = (items: Item[]) => items.map((i) => i.name).sort();

describe('DeadlineWheel', () => {
  it('gives out each item once its deadline is reached, not before', () => {
    const w = new DeadlineWheel<Item>(100, (i) => i.deadline, 0, 8);
    const a = item('a', 250);
    const b = item('b', 260);
    const c = item('c', 5_000); // more than a turn (800 ms) ahead: passed over until then
    for (const i of [a, b, c]) w.file(i);
    expect(w.due(200)).toEqual([]);
    expect(names(w.due(255))).toEqual(['a']);
    expect(names(w.due(300))).toEqual(['b']);
    for (let t = 400; t < 5_000; t += 100) expect(w.due(t)).toEqual([]);
    expect(names(w.due(5_000))).toEqual(['c']);
    expect(w.size).toBe(0);
  });

  it('moves an item whose deadline changed, earlier or later, and forgets one without a deadline', () => {
    const w = new DeadlineWheel<Item>(100, (i) => i.deadline, 0, 8);
    const a = item('a', 10_000);
    w.file(a);
    a.deadline = 150;
    w.file(a);
    expect(w.size).toBe(1);
    expect(names(w.due(150))).toEqual(['a']);
    a.deadline = Number.POSITIVE_INFINITY;
    w.file(a);
    expect(w.size).toBe(0);
    expect(a.deadlineSpot).toBe(-1);
  });

  it('gives out a deadline already past at the next sweep, and all that fell due over a long stall', () => {
    const w = new DeadlineWheel<Item>(100, (i) => i.deadline, 1_000, 8);
    const late = item('late', 500);
    w.file(late);
    expect(names(w.due(1_000))).toEqual(['late']);
    const many = Array.from({ length: 50 }, (_, k) => item(`i${k}`, 1_000 + k * 37));
    for (const i of many) w.file(i);
    // No sweep for longer than a turn.
    expect(w.due(100_000)).toHaveLength(50);
    expect(w.size).toBe(0);
  });

  it('agrees with a scan of every item over random deadlines, changes and sweeps', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const w = new DeadlineWheel<Item>(50, (i) => i.deadline, 0, 16);
    const live = new Set<Item>();
    let now = 0;
    for (let step = 0; step < 3_000; step++) {
      const r = random();
      if (r < 0.4) {
        const i = item(`n${step}`, now + Math.floor(random() * 3_000) - 100);
        live.add(i);
        w.file(i);
      } else if (r < 0.6 && live.size > 0) {
        const i = [...live][Math.floor(random() * live.size)] as Item;
        i.deadline = random() < 0.1 ? Number.POSITIVE_INFINITY : now + Math.floor(random() * 3_000);
        if (i.deadline === Number.POSITIVE_INFINITY) live.delete(i);
        w.file(i);
      } else if (r < 0.65 && live.size > 0) {
        const i = [...live][Math.floor(random() * live.size)] as Item;
        live.delete(i);
        w.drop(i);
      } else {
        now += Math.floor(random() * (random() < 0.05 ? 2_000 : 80));
        const expected = [...live].filter((i) => i.deadline <= now);
        for (const i of expected) live.delete(i);
        expect(names(w.due(now))).toEqual(names(expected));
      }
      expect(w.size).toBe(live.size);
    }
  });
});
