import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch, mergePatch } from './merge-patch.js';

describe('mergePatch', () => {
  it('carries only what changed, null for what went', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 2, d: 4 }, f: 'x' })).toEqual({
      b: { d: 4 },
      f: 'x',
      e: null,
    });
  });

  it('has no patch when the new data holds a null (it would read as a removal) or is not an object', () => {
    expect(mergePatch({ a: 1 }, { a: null })).toBeUndefined();
    expect(mergePatch({ a: 1 }, { b: { c: null } })).toBeUndefined();
    expect(mergePatch({ a: 1 }, 'text')).toBeUndefined();
    expect(mergePatch([1], [2])).toBeUndefined();
    // A __proto__ key deep in a new subtree (found by the property below, seed -505951938).
    expect(mergePatch({}, JSON.parse('{"":{"__proto__":[]}}'))).toBeUndefined();
    expect(mergePatch({ a: { b: 1 } }, JSON.parse('{"a":{"b":1,"c":{"__proto__":1}}}'))).toBeUndefined();
  });

  it('rebuilds the new data exactly when applied to the base, whatever the JSON', () => {
    const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), fc.dictionary(fc.string(), json), (base, next) => {
        const patch = mergePatch(base, next);
        if (patch !== undefined) expect(applyMergePatch(base, patch)).toEqual(next);
      }),
      { numRuns: 300 },
    );
  });
});
