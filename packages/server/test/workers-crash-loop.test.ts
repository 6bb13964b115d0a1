/**
 * The crash-loop guard of `bayou start --workers`: a real primary (`runWorkers` from the
 * built package) over real worker processes that crash soon after they start. Replacements
 * wait longer after each fast crash in a row, and the primary gives up with code 1 and a
 * clear message after `maxFastCrashes`; a worker that ran longer than `minUptime` is
 * replaced at once, however often.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './cluster-helpers.js';

const fixture = resolve(import.meta.dirname, 'fixtures/crashing-workers.mjs');
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Primary {
  child: ChildProcess;
  /** When each worker started (ms since the epoch, as it printed). */
  ups: number[];
  err: string;
  exited: Promise<number | null>;
}

function primary(crashAfterMs: number, policy: Record<string, number>): Primary {
  const env = {
    ...process.env,
    CRASH_AFTER_MS: String(crashAfterMs),
    RESTART_POLICY: JSON.stringify(policy),
  };
  const child = spawn('node', [fixture], { env });
  children.push(child);
  const p: Primary = {
    child,
    ups: [],
    err: '',
    exited: new Promise((done) => child.once('exit', (code) => done(code))),
  };
  child.stdout?.on('data', (d: Buffer) => {
    for (const m of d.toString().matchAll(/^up (\d+)$/gm)) p.ups.push(Number(m[1]));
  });
  child.stderr?.on('data', (d: Buffer) => {
    p.err += d.toString();
  });
  return p;
}

describe('crash-loop guard of the workers', () => {
  it('waits longer before each replacement of a worker that crashes at start, then gives up with code 1', async () => {
    const p = primary(20, { minUptime: 2000, baseDelay: 150, maxDelay: 500, maxFastCrashes: 4 });
    expect(await p.exited).toBe(1);
    // The first worker and three replacements; the fourth fast crash ends it.
    expect(p.ups).toHaveLength(4);
    const waits = [150, 300, 500];
    for (const [i, wait] of waits.entries()) {
      expect((p.ups[i + 1] as number) - (p.ups[i] as number)).toBeGreaterThanOrEqual(wait);
      expect(p.err).toContain(`(fast crash ${i + 1} of 4): starting another in ${wait} ms`);
    }
    expect(p.err).toMatch(
      /exited with code 3: 4 workers in a row died within 2000 ms of starting .*giving up/,
    );
  }, 20_000);

  it('replaces at once a worker that ran longer than minUptime, however often', async () => {
    const p = primary(300, { minUptime: 200, baseDelay: 5000, maxDelay: 5000, maxFastCrashes: 2 });
    await eventually(() => expect(p.ups.length).toBeGreaterThanOrEqual(4), 15_000);
    expect(p.err).not.toContain('giving up');
    expect(p.err).not.toContain('fast crash');
    expect(p.err).toMatch(/exited with code 3: starting another/);
    // No backoff: each replacement starts about when the one before crashed.
    for (let i = 1; i < 4; i++) expect((p.ups[i] as number) - (p.ups[i - 1] as number)).toBeLessThan(5000);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }, 20_000);
});

describe('workers that cannot start', () => {
  it('exit 2 with the reason once, whichever worker is seen ending first', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-failing-workers-'));
    const child = spawn('node', [resolve(import.meta.dirname, 'fixtures/failing-workers.mjs')], {
      env: { ...process.env, SYNC_DIR: dir },
    });
    children.push(child);
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    rmSync(dir, { recursive: true, force: true });
    expect(err).toBe('bayou: cannot start: the reason\n');
    expect(code).toBe(2);
  });
});
