import { describe, expect, it } from 'vitest';
import { RandomIds } from './random-ids.js';

describe('RandomIds', () => {
  it('gives unique base64url ids of the asked size', () => {
    const ids = new RandomIds(18, 16);
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = ids.next();
      expect(id).toMatch(/^[A-Za-z0-9_-]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
  });

  it('refills in the background: no synchronous fill when the spare pool is ready', async () => {
    const ids = new RandomIds(12, 4);
    await ids.settled(); // the first background refill has landed
    for (let i = 0; i < 8; i++) ids.next(); // uses the first pool and the refilled one
    expect(ids.syncFills).toBe(0);
    for (let i = 0; i < 8; i++) ids.next(); // faster than a refill can land: filled in place
    expect(ids.syncFills).toBeGreaterThan(0);
  });

  it('refuses ids too short to be unguessable', () => {
    expect(() => new RandomIds(4)).toThrow(RangeError);
  });
});
