import { describe, expect, it } from 'vitest';
import {
  tuneRuntime,
  WORKER_MALLOC_ENV,
  WORKER_SEMI_SPACE_MB,
  workerEnv,
  workerExecArgv,
} from './runtime-tuning.js';

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

describe('workerExecArgv', () => {
  it('forks workers with a small young generation, after the primary own options', () => {
    expect(workerExecArgv(['--enable-source-maps'], '')).toEqual([
      '--enable-source-maps',
      `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
    ]);
  });

  it('passes on the semi-space size a process was started with, in either spelling or in NODE_OPTIONS', () => {
    expect(workerExecArgv(['--max-semi-space-size=8'], '')).toEqual(['--max-semi-space-size=8']);
    expect(workerExecArgv(['--max_semi_space_size', '4'], '')).toEqual(['--max_semi_space_size', '4']);
    expect(workerExecArgv([], '--max-old-space-size=512 --max-semi-space-size=16')).toEqual([]);
  });
});

describe('workerEnv', () => {
  it('forks workers with one malloc arena and a fixed mmap threshold', () => {
    expect(workerEnv({ PATH: '/usr/bin' })).toEqual({
      MALLOC_ARENA_MAX: '1',
      MALLOC_MMAP_THRESHOLD_: '131072',
    });
    expect(workerEnv({})).toEqual(WORKER_MALLOC_ENV);
  });

  it("adds nothing when the process's environment sets malloc's behaviour itself", () => {
    expect(workerEnv({ MALLOC_ARENA_MAX: '4' })).toEqual({});
    expect(workerEnv({ MALLOC_TRIM_THRESHOLD_: '0' })).toEqual({});
    expect(workerEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toEqual({});
    expect(workerEnv({ GLIBC_TUNABLES: 'glibc.rtld.optional_static_tls=512' })).toEqual(WORKER_MALLOC_ENV);
  });
});
