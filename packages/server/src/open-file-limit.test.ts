import { describe, expect, it } from 'vitest';
import { defaultMaxConnections, openFileLimit } from './open-file-limit.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63504                63504                processes
Max open files            20000                40000                files
`;

describe('openFileLimit', () => {
  it('reads the soft limit of /proc/self/limits, or null where there is none', () => {
    expect(openFileLimit(() => LIMITS)).toBe(20_000);
    expect(openFileLimit(() => 'Max open files  unlimited  unlimited  files')).toBeNull();
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeNull();
  });

  it('derives the default cap: 90% of the limit, 10,000 without one', () => {
    expect(defaultMaxConnections(20_000)).toBe(18_000);
    expect(defaultMaxConnections(1_048_576)).toBe(943_718);
    expect(defaultMaxConnections(null)).toBe(10_000);
  });
});
