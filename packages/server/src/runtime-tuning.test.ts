import { describe, expect, it } from 'vitest';
import { tuneRuntime, WORKER_SEMI_SPACE_MB, workerExecArgv } from './runtime-tuning.js';

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
