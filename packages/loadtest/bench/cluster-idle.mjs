// @ts-check
// The opt-in part of the cluster bench (`--idle N`): N idle WebSocket sessions on `bayou
// start --workers <idle-workers> --redis`, each subscribed to one channel, held `--idle-hold`
// ms with their heartbeats: RSS per session over the workers, CPU while idle, Redis memory
// and keys per session.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAddresses, runScenario } from '../dist/index.js';
import { childPids, redisCommand, redisMemory, rssOf } from './cluster-processes.mjs';
import { cpuSeconds } from './lib.mjs';

/** @import { BenchRedis } from './cluster-processes.mjs' */

const here = dirname(fileURLToPath(import.meta.url));
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {object} IdleRow
 * @property {number} sessions connected
 * @property {number} failed
 * @property {number} workers
 * @property {number} rssPerSession bytes, all workers
 * @property {number} redisPerSession bytes of Redis memory
 * @property {number} redisKeys keys added
 * @property {number} idleCpuPercent of one core, all workers
 */

/**
 * The keys in Redis's keyspace.
 * @param {number} port
 */
async function redisKeys(port) {
  return Number(/keys=(\d+)/.exec(await redisCommand(port, 'INFO keyspace'))?.[1] ?? 0);
}

/**
 * Resolves with the base URL `bayou start` prints once it listens.
 * @param {import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, null>} primary
 * @returns {Promise<string>}
 */
function listeningUrl(primary) {
  return new Promise((resolve, reject) => {
    let out = '';
    primary.stdout.on('data', (d) => {
      out += d;
      const m = /Bayou listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    primary.once('exit', (code) => reject(new Error(`bayou start exited with ${code}`)));
  });
}

/**
 * @param {BenchRedis} redis
 * @param {{ idle: number, idleWorkers: number, idleHold: number }} flags
 * @returns {Promise<IdleRow>}
 */
export async function idleSessions(redis, flags) {
  const cli = join(here, '../../server/dist/cli.js');
  const args = ['start', '--host', '127.0.0.1', '--port', '0', '--workers', String(flags.idleWorkers)];
  const primary = spawn(process.execPath, [cli, ...args, '--redis', redis.url, '--redis-prefix', 'idle:'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BAYOU_LOG_LEVEL: 'warn', BAYOU_LOG_FORMAT: 'json' },
  });
  try {
    const base = await listeningUrl(primary);
    await sleep(1000);
    const workers = childPids(/** @type {number} */ (primary.pid));
    const rss0 = workers.reduce((a, p) => a + rssOf(p), 0);
    const redis0 = await redisMemory(redis.port);
    const keys0 = await redisKeys(redis.port);
    /** What the held window read at its start (after 5 s of hold) and at its end. */
    const held = {
      opened: false,
      closed: false,
      rss: 0,
      redis: 0,
      keys: 0,
      cpu0: [0],
      t0: 0,
      cpu1: [0],
      t1: 0,
    };
    const r = await runScenario(
      'connections',
      {
        url: `${base}/bayeux`,
        clients: flags.idle,
        ramp: 2000,
        hold: flags.idleHold,
        workers: Math.max(2, Math.ceil(flags.idle / 15000)),
        localAddresses: parseAddresses('127.0.0.2-127.0.0.9'),
        metricsUrl: 'off',
      },
      {
        protocol: 'bayeux',
        onWindow: async (event) => {
          if (event !== 'open') {
            held.cpu1 = workers.map((p) => cpuSeconds(p));
            held.t1 = Date.now();
            held.closed = held.opened;
            return;
          }
          await sleep(5000);
          held.rss = workers.reduce((a, p) => a + rssOf(p), 0);
          held.redis = await redisMemory(redis.port);
          held.keys = await redisKeys(redis.port);
          held.cpu0 = workers.map((p) => cpuSeconds(p));
          held.t0 = Date.now();
          held.opened = true;
        },
      },
    );
    const h = held;
    if (!h.closed) throw new Error('the idle window never opened and closed');
    const n = r.sessions.connected;
    const cpu = h.cpu1.reduce((a, c, i) => a + c - (h.cpu0[i] ?? c), 0);
    return {
      sessions: n,
      failed: r.sessions.failed,
      workers: workers.length,
      rssPerSession: (h.rss - rss0) / n,
      redisPerSession: (h.redis - redis0) / n,
      redisKeys: h.keys - keys0,
      idleCpuPercent: (cpu / ((h.t1 - h.t0) / 1000)) * 100,
    };
  } finally {
    primary.kill('SIGTERM');
    await new Promise((r) => {
      if (primary.exitCode !== null) r(undefined);
      else primary.once('exit', r);
    });
  }
}
