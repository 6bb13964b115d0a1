// Processes of the cluster bench: a private redis-server on a free loopback port, Redis
// commands over a raw socket (INFO, commandstats), Bayou nodes forked with an IPC line
// saying where they listen, and /proc readings of a process tree (RSS, children).
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function redisServerPath() {
  if (process.env.REDIS_SERVER_PATH && existsSync(process.env.REDIS_SERVER_PATH))
    return process.env.REDIS_SERVER_PATH;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'])
    if (dir && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  return null;
}

export async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** Sends one inline command to Redis and resolves with the raw reply text. */
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

/** Total calls per command from INFO commandstats. */
export async function commandStats(port) {
  const text = await redisCommand(port, 'INFO commandstats');
  const calls = {};
  for (const m of text.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) calls[m[1]] = Number(m[2]);
  return calls;
}

export function diff(after, before) {
  const out = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}
export const total = (calls) => Object.values(calls).reduce((a, b) => a + b, 0);

/** A script of bench/ in its own process; resolves once it reports its URL. */
export function forkScript(script, args, env = {}) {
  const child = fork(join(here, script), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.on('message', (m) => {
      if (m?.type !== 'listening') return;
      clearTimeout(timer);
      resolve({
        pid: child.pid,
        url: m.url,
        send: (message) => child.send(message),
        port: Number(new URL(m.url).port),
        stop: () =>
          new Promise((done) => {
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
/** `count` nodes on `redis` (memory engine when null); `args` after the engine's, `env` for each. */
export async function startNodes(count, redis, { args = [], env = {} } = {}) {
  const prefix = `bench${process.pid}.${++prefixes}:`;
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

export function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export async function redisMemory(port) {
  const text = await redisCommand(port, 'INFO memory');
  return Number(/used_memory:(\d+)/.exec(text)?.[1] ?? 0);
}
