import { describe, expect, it } from 'vitest';
import { tuneRuntime } from './runtime-tuning.js';

describe('tuneRuntime', () => {
  it('turns allocation-site pretenuring off by default', () => {
    expect(tuneRuntime([], '')).toEqual(['--no-allocation-site-pretenuring']);
  });

  it('leaves the choice of a process started with the flag, either way, on the command line or in NODE_OPTIONS', () => {
    expect(tuneRuntime(['--allocation-site-pretenuring'], '')).toEqual([]);
    expect(tuneRuntime([], '--max-old-space-size=512 --allocation-site-pretenuring')).toEqual([]);
    expect(tuneRuntime(['--no-allocation-site-pretenuring'], '')).toEqual([]);
  });
});
