import { describe, expect, it } from 'vitest';
import { SubscriptionSet } from './subscription-set.js';

describe('SubscriptionSet', () => {
  it('behaves as a Set of strings through one name, two, and back', () => {
    const s = new SubscriptionSet();
    const mirror = new Set<string>();
    const same = () => {
      expect(s.size).toBe(mirror.size);
      expect([...s]).toEqual([...mirror]);
      expect([...s.keys()]).toEqual([...mirror.keys()]);
      expect([...s.entries()]).toEqual([...mirror.entries()]);
      const seen: string[] = [];
      s.forEach((value, key, set) => {
        expect(key).toBe(value);
        expect(set).toBe(s);
        seen.push(value);
      });
      expect(seen).toEqual([...mirror]);
      for (const name of ['/a', '/b', '/c', '/d']) expect(s.has(name)).toBe(mirror.has(name));
    };
    same();
    for (const [op, name] of [
      ['add', '/a'],
      ['add', '/a'],
      ['delete', '/b'],
      ['delete', '/a'],
      ['delete', '/a'],
      ['add', '/b'],
      ['add', '/c'],
      ['add', '/b'],
      ['delete', '/b'],
      ['add', '/d'],
      ['delete', '/c'],
      ['delete', '/d'],
      ['add', '/a'],
    ] as const) {
      if (op === 'add') expect(s.add(name)).toBe(s);
      else expect(s.delete(name)).toBe(mirror.has(name));
      if (op === 'add') mirror.add(name);
      else mirror.delete(name);
      same();
    }
  });

  it('allows deleting while iterating, as a Set does', () => {
    for (const names of [['/a'], ['/a', '/b', '/c']]) {
      const s = new SubscriptionSet();
      for (const n of names) s.add(n);
      const visited: string[] = [];
      for (const n of s) {
        visited.push(n);
        s.delete(n);
      }
      expect(visited).toEqual(names);
      expect(s.size).toBe(0);
    }
  });
});
