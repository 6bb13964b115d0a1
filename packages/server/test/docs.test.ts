/**
 * The READMEs against the code: they list every error code and option the code defines, and
 * the commands they show run (each one the docs test can run here; the others say why not).
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { BayeuxErrors, formatError } from '@bayou/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../src/index.js';
import { defaultOptions } from '../src/options.js';
import {
  commandsOf,
  FILES_DIR,
  LOCAL_REDIS,
  type Plan,
  plan,
  type ReadmeCommand,
  readmes,
  where,
} from './readme-commands.js';
import { RedisServer } from './redis-server.js';

const readme = (pkg: string) => readFileSync(resolve(import.meta.dirname, `../../${pkg}/README.md`), 'utf8');

describe('error documentation', () => {
  it('documents every BAYOU_ERR_* code of the server', () => {
    const text = readme('server');
    for (const code of Object.keys(ErrorCodes)) expect(text).toContain(`\`${code}\``);
  });

  it('documents every Bayeux error of the protocol with its wire string', () => {
    const text = readme('protocol');
    for (const name of Object.keys(BayeuxErrors) as (keyof typeof BayeuxErrors)[]) {
      expect(text).toContain(`\`${name}\``);
      const wire = formatError(name);
      // The table shows args as <placeholders>: compare the code and the message.
      expect(text).toContain(`${wire.split(':')[0]}:`);
      expect(text).toContain(`:${BayeuxErrors[name].message}\``);
    }
  });
});

describe('option documentation', () => {
  it('lists every plugin option in the server README options table', () => {
    const text = readme('server');
    const keys = [
      ...Object.keys(defaultOptions),
      'authenticate',
      'canSubscribe',
      'canPublish',
      'auth',
      'metricsRegistry',
      'engine',
    ];
    for (const key of keys) expect(text).toMatch(new RegExp(`^\\| \`${key}[\`(]`, 'm'));
  });
});

interface Ran {
  code: number | null;
  output: string;
  /** A serve plan: the URL it printed once up. */
  url?: string;
}

/** Runs a plan: to its end, or (serve) until it prints a loopback URL, then SIGTERM to its group. */
function run(p: Exclude<Plan, { kind: 'skip' }>): Promise<Ran> {
  const [cmd, ...args] = p.argv as [string, ...string[]];
  const env = { ...process.env, ...(p.kind === 'serve' ? p.env : {}), NO_COLOR: '1' };
  const child = spawn(cmd, args, { cwd: p.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let url: string | undefined;
  return new Promise((resolve) => {
    const stop = () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    };
    const timer = setTimeout(stop, 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /https?:\/\/127\.0\.0\.1:[1-9]\d*/.exec(output);
      if (p.kind === 'serve' && found && url === undefined) {
        url = found[0];
        stop();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ...(url !== undefined ? { url } : {}) });
    });
  });
}

/** Runs `items` through `fn`, `limit` at a time (two cores, shared). */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe('the commands the READMEs show', () => {
  afterAll(() => rmSync(FILES_DIR, { recursive: true, force: true }));
  const planned = readmes()
    .flatMap(commandsOf)
    .map((command) => ({ command, plan: plan(command) }));
  /** Runnable plans, each distinct command line once. */
  const runnable = (kind: Plan['kind']) => {
    const seen = new Set<string>();
    return planned.filter(({ plan: p }) => {
      if (p.kind !== kind || p.kind === 'skip') return false;
      const key = `${p.cwd} ${p.argv.join(' ')} ${JSON.stringify('env' in p ? p.env : {})}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }) as { command: ReadmeCommand; plan: Exclude<Plan, { kind: 'skip' }> }[];
  };

  it('runs each one here, or says why it cannot: none is left unclassified', () => {
    const unclassified = planned.filter(({ plan: p }) => p.kind === 'skip' && p.reason === '');
    expect(unclassified.map(({ command }) => where(command))).toEqual([]);
    // The READMEs' own: a parser that found nothing would pass the tests below vacuously.
    expect(runnable('help').length).toBeGreaterThanOrEqual(5);
    expect(runnable('serve').length).toBeGreaterThanOrEqual(8);
    expect(runnable('flags').length).toBeGreaterThanOrEqual(5);
    expect(runnable('make').length).toBeGreaterThanOrEqual(1);
  });

  it('--help of each command shown exits 0 and prints its usage', { timeout: 60_000 }, async () => {
    const results = await pool(runnable('help'), 3, async (c) => ({ c, r: await run(c.plan) }));
    for (const { c, r } of results) {
      expect(r.code, where(c.command)).toBe(0);
      expect(r.output, where(c.command)).toMatch(/usage/i);
    }
  });

  it('each server and example shown comes up with its flags and environment (on loopback, a port of its own)', {
    timeout: 90_000,
  }, async () => {
    // First the commands that make the files servers read (the README's test certificate).
    for (const c of runnable('make')) {
      const made = await run(c.plan);
      expect(made.code, `${where(c.command)}\n${made.output}`).toBe(0);
    }
    const serving = runnable('serve');
    // The README's commands on the local Redis (redis://127.0.0.1:6379) get one of the test's.
    const onRedis = serving.filter(({ plan: p }) => p.kind === 'serve' && p.redis === true);
    expect(onRedis.length).toBeGreaterThanOrEqual(2);
    const redis = await RedisServer.start();
    const local = (w: string) => w.replace(LOCAL_REDIS, redis.url);
    const withRedis = (p: Exclude<Plan, { kind: 'skip' }>): Exclude<Plan, { kind: 'skip' }> =>
      p.kind === 'serve' && p.redis === true
        ? {
            ...p,
            argv: p.argv.map(local),
            env: Object.fromEntries(Object.entries(p.env).map(([k, v]) => [k, local(v)])),
          }
        : p;
    let results: { c: (typeof serving)[number]; r: Ran }[];
    try {
      results = await pool(serving, 3, async (c) => ({ c, r: await run(withRedis(c.plan)) }));
    } finally {
      await redis.stop();
    }
    expect(results.some(({ r }) => r.url?.startsWith('https:'))).toBe(true);
    for (const { c, r } of results) {
      expect(r.url, `${where(c.command)}\n${r.output}`).toMatch(/^https?:\/\/127\.0\.0\.1:\d+$/);
      expect(r.output, where(c.command)).not.toMatch(/Error|exit code 2/);
    }
  });

  it('each load tester run shown takes its flags and values (parsed and resolved, not run: runs last 10 s to minutes)', {
    timeout: 60_000,
  }, async () => {
    const results = await pool(runnable('flags'), 3, async (c) => ({ c, r: await run(c.plan) }));
    for (const { c, r } of results) expect(r.code, `${where(c.command)}\n${r.output}`).toBe(0);
  });
});
