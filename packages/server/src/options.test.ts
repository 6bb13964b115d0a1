import { describe, expect, it } from 'vitest';
import { defaultOptions, resolveOptions } from './options.js';

describe('resolveOptions', () => {
  it('fills every default and freezes the result', () => {
    const o = resolveOptions({ timeout: 5000 });
    expect(o).toEqual({ ...defaultOptions, timeout: 5000 });
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('rejects unknown keys, naming them', () => {
    expect(() => resolveOptions({ timout: 1 } as never)).toThrow(/unknown option\(s\): timout/);
  });

  it('rejects bad values, naming the option', () => {
    expect(() => resolveOptions({ timeout: -1 })).toThrow(/"timeout" must be a non-negative number/);
    expect(() => resolveOptions({ path: 'bayeux' })).toThrow(/"path"/);
    expect(() => resolveOptions({ transports: ['carrier-pigeon' as never] })).toThrow(/"transports"/);
    expect(() => resolveOptions({ transports: [] })).toThrow(/"transports"/);
    expect(() => resolveOptions({ authenticate: 'yes' as never })).toThrow(
      /"authenticate" must be a function/,
    );
  });

  it('ignores keys set to undefined', () => {
    expect(resolveOptions({ timeout: undefined }).timeout).toBe(30_000);
  });
});
