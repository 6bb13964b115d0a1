// @ts-check
// Processes of the cluster bench: a private redis-server on a free loopback port, Redis
// commands over a raw socket (INFO, commandstats), Bayou nodes forked with an IPC line
// saying where they listen, and /proc readings of a process tree (RSS, children).
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A private redis-server of the bench.
 * @typedef {{ port: number, pid: number | undefined, url: string, stop: () => void }} BenchRedis
 */
/**
 * A bench script in its own process (a Bayou node, the balancer).
 * @typedef {object} ForkedScript
 * @property {number} pid
 * @property {string} url where it listens
 * @property {number} port
 * @property {(message: object) => void} send
 * @property {() => Promise<void>} stop SIGTERM, then SIGKILL after 3 s
 */
/** @typedef {Record<string, number>} CommandCalls calls per Redis command */

/** The redis-server to start: REDIS_SERVER_PATH, else the first on PATH (or in sbin); null when there is none. */
export function redisServerPath() {
  if (process.env.REDIS_SERVER_PATH && existsSync(process.env.REDIS_SERVER_PATH))
    return process.env.REDIS_SERVER_PATH;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'])
    if (dir && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  return null;
}

/** A loopback port free at the moment of asking. */
export async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

/**
 * Sends one inline command to Redis and resolves with the raw reply text.
 * @param {number} port
 * @param {string} command
 * @returns {Promise<string>}
 */
export function redisCommand(port, command) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk;
      const m = /^\$(\d+)\r\n/.exec(data);
      if ((m && Buffer.byteLength(data) >= m[0].length + Number(m[1]) + 2) || (!m && data.includes('\r\n'))) {
        socket.destroy();
        resolve(data);
      }
    });
  });
}

/**
 * A redis-server on a free loopback port, no persistence; null when none is installed.
 * @returns {Promise<BenchRedis | null>}
 */
export async function startRedis() {
  const program = redisServerPath();
  if (program === null) return null;
  const port = await freePort();
  const child = spawn(
    program,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 200; i++) {
    const pong = await redisCommand(port, 'PING').catch(() => '');
    if (pong.startsWith('+PONG')) break;
    await sleep(25);
  }
  return {
    port,
    pid: child.pid,
    url: `redis://127.0.0.1:${port}`,
    stop: () => child.kill('SIGKILL'),
  };
}

/**
 * Total calls per command from INFO commandstats.
 * @param {number} port
 * @returns {Promise<CommandCalls>}
 */
export async function commandStats(port) {
  const text = await redisCommand(port, 'INFO commandstats');
  /** @type {CommandCalls} */
  const calls = {};
  for (const m of text.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) calls[String(m[1])] = Number(m[2]);
  return calls;
}

/**
 * The calls made between two readings, per command (commands not called left out).
 * @param {CommandCalls} after
 * @param {CommandCalls} before
 * @returns {CommandCalls}
 */
export function diff(after, before) {
  /** @type {CommandCalls} */
  const out = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}
/** @param {CommandCalls} calls */
export const total = (calls) => Object.values(calls).reduce((a, b) => a + b, 0);

/**
 * A script of bench/ in its own process; resolves once it reports its URL.
 * @param {string} script
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<ForkedScript>}
 */
export function forkScript(script, args, env = {}) {
  const child = fork(join(here, script), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.on('message', (/** @type {{ type?: string, url?: string } | null} */ m) => {
      if (m?.type !== 'listening' || typeof m.url !== 'string' || child.pid === undefined) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid,
        url: m.url,
        send: (message) => child.send(message),
        port: Number(new URL(m.url).port),
        stop: () =>
          new Promise((/** @type {(value?: undefined) => void} */ done) => {
            child.removeAllListeners('exit');
            child.once('exit', done);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 3000).unref();
          }),
      });
    });
  });
}

let prefixes = 0;
/**
 * `count` nodes on `redis` (memory engine when null); `args` after the engine's, `env` for each.
 * @param {number} count
 * @param {BenchRedis | null} redis
 * @param {{ args?: string[], env?: NodeJS.ProcessEnv }} [extra]
 * @returns {Promise<ForkedScript[]>}
 */
export async function startNodes(count, redis, { args = [], env = {} } = {}) {
  const prefix = `bench${process.pid}.${++prefixes}:`;
  /** @type {ForkedScript[]} */
  const nodes = [];
  for (let i = 0; i < count; i++)
    nodes.push(
      await forkScript(
        'servers/bayou-node.mjs',
        [...(redis ? [redis.url, prefix] : ['memory', '']), ...args],
        env,
      ),
    );
  return nodes;
}

/**
 * The pids of `pid`'s children (pgrep -P).
 * @param {number} pid
 * @returns {number[]}
 */
export function childPids(pid) {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * RSS of a process in bytes (0 when /proc does not say).
 * @param {number} pid
 */
export function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Redis's used_memory in bytes.
 * @param {number} port
 */
export async function redisMemory(port) {
  const text = await redisCommand(port, 'INFO memory');
  return Number(/used_memory:(\d+)/.exec(text)?.[1] ?? 0);
}
