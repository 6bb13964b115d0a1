/**
 * The cluster options of the plugin and the CLI: `redis` builds a Redis engine (not with
 * `engine`), `/readyz`, `--redis`/`BAYOU_REDIS_URL`, and `--workers N` running N node
 * processes on one port (refused without Redis, all stopped by one SIGTERM).
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, MemoryEngine } from '../src/index.js';
import { WORKER_MALLOC_ENV, WORKER_SEMI_SPACE_MB } from '../src/runtime-tuning.js';
import { eventually, redisPerFile, requireRedis } from './cluster-helpers.js';
import { nodeIdAt } from './test-client.js';

requireRedis('cluster CLI');

const cli = resolve(import.meta.dirname, '../dist/cli.js');
const children: ChildProcessWithoutNullStreams[] = [];

/** Environment without the caller's BAYOU_* / PORT / HOST, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('BAYOU_') && k !== 'PORT' && k !== 'HOST') env[k] = v;
  return { ...env, ...extra };
}

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn('node', [cli, 'start', '--log-format', 'json', '--log-level', 'warn', ...args], {
    env: cleanEnv(env),
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const waitFor = async (re: RegExp, ms = 15_000): Promise<RegExpExecArray> => {
    let exited = false;
    const m = await eventually(() => {
      if (exited) return null;
      exited = child.exitCode !== null; // one more look at what it printed before exiting
      const found = re.exec(out);
      if (found === null) throw new Error(`no ${re} in: ${out}`);
      return found;
    }, ms);
    if (m === null) throw new Error(`exited (${child.exitCode}) with no ${re} in: ${out}`);
    return m;
  };
  return { child, exit, waitFor, out: () => out };
}

/** The processes whose parent is `pid` (from /proc). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent's pid is the second field after the command name's closing parenthesis.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // It ended meanwhile.
    }
  }
  return out;
}

/** The command lines of `pid`'s child processes. */
function childCommandLines(pid: number): string[][] {
  return childPids(pid).map((child) =>
    readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter(Boolean),
  );
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe('the redis option', () => {
  it('refuses engine and redis together, and a redis value that is no Redis', async () => {
    await expect(createServer({ engine: new MemoryEngine(), redis: 'redis://127.0.0.1:1' })).rejects.toThrow(
      /"engine" and "redis" exclude each other/,
    );
    await expect(createServer({ redis: 'http://127.0.0.1:6379' })).rejects.toThrow(
      /"redis" must be a redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/ URL/,
    );
    await expect(createServer({ redisEngine: { keyPrefix: 'x:' } })).rejects.toThrow(/needs "redis"/);
  });

  it('answers /healthz and /readyz with 200 on the memory engine', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0 });
    const base = await server.listen();
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    await server.close();
  });

  it('--workers without --redis is refused, saying why', () => {
    const r = spawnSync('node', [cli, 'start', '--port', '0', '--workers', '3'], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--workers needs --redis');
    expect(r.stderr).toContain('each worker is a separate node');
  });

  it('a Redis that cannot be reached at start-up is a clear error', async () => {
    const s = start(['--port', '0', '--redis', 'redis://127.0.0.1:1']);
    expect(await s.exit).not.toBe(0);
    expect(s.out()).toContain('cannot join the cluster on redis://127.0.0.1:1');
  });
});

describe('bayou start with Redis', () => {
  const redis = redisPerFile();

  it('--workers 2 --redis runs two nodes on one port and stops them all on SIGTERM', async () => {
    const s = start(['--host', '127.0.0.1', '--port', '0', '--workers', '2', '--redis', redis().url]);
    const [, base] = await s.waitFor(/Bayou listening on (http:\/\/[^\s]+) .*with 2 workers/);
    const nodes = new Set<string>();
    for (let i = 0; i < 20 && nodes.size < 2; i++) nodes.add(await nodeIdAt(`${base}`));
    expect(nodes.size).toBe(2);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // The workers are forked with a small young generation (runtime-tuning.ts), the primary not.
    const workers = childCommandLines(s.child.pid as number).filter((argv) => argv.includes(cli));
    expect(workers).toHaveLength(2);
    for (const argv of workers) expect(argv).toContain(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
    expect(readFileSync(`/proc/${s.child.pid}/cmdline`, 'utf8')).not.toContain('semi-space');
    // ... and with a malloc that keeps less (runtime-tuning.ts), the primary not.
    for (const pid of childPids(s.child.pid as number)) {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      for (const [k, v] of Object.entries(WORKER_MALLOC_ENV)) expect(env).toContain(`${k}=${v}`);
    }
    expect(readFileSync(`/proc/${s.child.pid}/environ`, 'utf8')).not.toContain('MALLOC_ARENA_MAX');
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('reads BAYOU_REDIS_URL and the key prefix, and joins other nodes on that Redis', async () => {
    const a = start(['--host', '127.0.0.1', '--port', '0'], {
      BAYOU_REDIS_URL: redis().url,
      BAYOU_REDIS_PREFIX: 'cli-test:',
    });
    const [, base] = await a.waitFor(/Bayou listening on (http:\/\/[^\s]+) /);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const { Redis } = await import('ioredis');
    const admin = new Redis(redis().port, '127.0.0.1');
    try {
      expect(await admin.zcard('cli-test:{ctl}:nodes')).toBe(1);
    } finally {
      admin.disconnect();
    }
    a.child.kill('SIGTERM');
    expect(await a.exit).toBe(0);
  });
});
