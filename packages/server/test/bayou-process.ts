/**
 * `bayou start` as a real child process, for the suites that kill or restart nodes: the
 * built CLI (`dist/cli.js`) run with the given flags and an environment without `BAYOU_*`
 * variables (but those a test adds), so only what the test gives configures it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually } from './cluster-helpers.js';

export const cliPath = resolve(import.meta.dirname, '../dist/cli.js');

export interface BayouProcess {
  child: ChildProcess;
  port: number;
  /** Everything it wrote on stdout and stderr so far. */
  readonly output: string;
  /** Resolves with its exit code (null when a signal ended it) once it exited. */
  exited: Promise<number | null>;
}

/** Starts `bayou start <args>` (with `extraEnv` added); resolves once it says where it listens. */
export async function startBayou(
  args: string[],
  startTimeoutMs = 20_000,
  extraEnv: Record<string, string> = {},
): Promise<BayouProcess> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('BAYOU_') && k !== 'PORT' && k !== 'HOST') env[k] = v;
  Object.assign(env, extraEnv);
  const child = spawn('node', [cliPath, 'start', ...args], { env });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let port: number;
  try {
    port = await eventually(() => {
      if (child.exitCode !== null) throw new Error(`bayou exited with ${child.exitCode}: ${out}`);
      const m = /listening on https?:\/\/[^:]+:(\d+)/.exec(out);
      if (m === null) throw new Error(`not listening yet: ${out}`);
      return Number(m[1]);
    }, startTimeoutMs);
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw err;
  }
  return {
    child,
    port,
    get output() {
      return out;
    },
    exited,
  };
}
