/**
 * The processes of a chaos cluster, all on loopback: one redis-server that keeps its data
 * across a restart (it saves on SIGTERM, as a default-configured Redis does), `bayou start
 * --redis` nodes on fixed ports (a restarted node comes back on the same port, so the
 * balancer needs no change), and a registry of every child started, so that the run stops
 * them all, by pid, at the end, on an error or on a signal.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { META_DISCONNECT, META_HANDSHAKE } from '@bayou/protocol';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Every child process this run started and has not seen exit, with the signal that stops it. */
const children = new Map<ChildProcess, NodeJS.Signals>();

/**
 * Registers `child` to be stopped by `stopAll`, with SIGKILL, or with `signal` for a process
 * that must stop its own children (nginx's master: SIGTERM, it stops its workers; a
 * SIGKILLed master would leave them serving).
 */
export function track(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): ChildProcess {
  children.set(child, signal);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stops every child still running, by pid (the run's end, an error or a signal). */
export function stopAll(): void {
  for (const [c, signal] of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
  children.clear();
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export function redisServerPath(): string | null {
  const given = process.env.REDIS_SERVER_PATH;
  if (given && existsSync(given)) return given;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'])
    if (dir && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  return null;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** A redis-server on a free loopback port, its data in a private directory. */
export class ChaosRedis {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'bayou-chaos-redis-'));

  private constructor(
    private readonly program: string,
    readonly port: number,
  ) {}

  static async start(): Promise<ChaosRedis> {
    const program = redisServerPath();
    if (program === null)
      throw new Error(
        '--cluster needs redis-server: install it (apt-get install redis-server) or set REDIS_SERVER_PATH',
      );
    const redis = new ChaosRedis(program, await freePort());
    await redis.spawn();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Stops Redis with SIGTERM (it saves its dataset) and starts it again on the same port. */
  async restart(): Promise<void> {
    const child = this.child;
    if (child !== null) {
      child.kill('SIGTERM');
      await exited(child);
    }
    await this.spawn();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child !== null) {
      child.kill('SIGKILL');
      await exited(child);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async spawn(): Promise<void> {
    // `save` set: a SIGTERM shutdown writes the RDB file, which the next start loads.
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir];
    args.push('--save', '3600 1', '--appendonly', 'no', '--maxclients', '10000');
    this.child = track(spawn(this.program, args, { stdio: 'ignore' }));
    for (let i = 0; i < 400; i++) {
      if (await ping(this.port)) return;
      await sleep(25);
    }
    throw new Error(`redis-server did not answer on port ${this.port}`);
  }
}

/** The `bayou` command of the installed @bayou/server. */
function bayouBin(): string {
  try {
    const pkg = createRequire(import.meta.url).resolve('@bayou/server/package.json');
    return join(dirname(pkg), 'bin', 'bayou.js');
  } catch {
    throw new Error('--cluster starts `bayou start` nodes: install @bayou/server next to @bayou/loadtest');
  }
}

export interface NodeSettings {
  redisUrl: string;
  prefix: string;
  apiKey: string;
  /** Directory for each node's output (`node0.log`, …); '' keeps none. */
  logDir: string;
}

/**
 * The server settings a run passes on to its nodes through the environment (the storm's
 * before/after: `BAYOU_DRAIN_SPREAD=0`, `BAYOU_MAX_HANDSHAKE_RATE=0`; a longer spread needs a
 * longer `BAYOU_SHUTDOWN_TIMEOUT`, which a node requires to exceed it).
 */
export const NODE_ENV_PASSED = [
  'BAYOU_DRAIN_SPREAD',
  'BAYOU_MAX_HANDSHAKE_RATE',
  'BAYOU_SHUTDOWN_TIMEOUT',
] as const;

/**
 * A node's environment: the run's, without `PORT` and the `BAYOU_` settings (the run gives
 * each node its own), except `NODE_ENV_PASSED`. Until 27 Nov 2026 every `BAYOU_` variable
 * was dropped, so the storm's "drain at once" runs were paced all the same.
 */
export function nodeEnv(given: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(given)) {
    const passed = (NODE_ENV_PASSED as readonly string[]).includes(k);
    if (passed || (!k.startsWith('BAYOU_') && k !== 'PORT')) env[k] = v;
  }
  return env;
}

/** One `bayou start --redis` process on a fixed loopback port; `start` again after it died. */
export class ChaosNode {
  child: ChildProcess | null = null;
  /** The node id its clientIds start with (`<nodeId>.<random>`); changes at each start. */
  nodeId = '';

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly settings: NodeSettings,
  ) {}

  /**
   * Starts the node; one that exits before listening (`bayou start` refuses to run while
   * Redis is down, e.g. during its restart) is started again, as a process manager would,
   * for up to 60 s.
   */
  async start(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.startOnce();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  }

  private async startOnce(): Promise<void> {
    const env = nodeEnv(process.env);
    const { redisUrl, prefix, apiKey } = this.settings;
    const args = [bayouBin(), 'start', '--host', '127.0.0.1', '--port', String(this.port)];
    args.push('--redis', redisUrl, '--redis-prefix', prefix, '--api-key', apiKey, '--log-level', 'warn');
    const child = track(spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child = child;
    let out = '';
    const log = this.settings.logDir === '' ? null : join(this.settings.logDir, `${this.name}.log`);
    if (log !== null) appendFileSync(log, `--- ${new Date().toISOString()} start\n`);
    const listening = new Promise<void>((resolve, reject) => {
      const read = (d: Buffer) => {
        if (log !== null) appendFileSync(log, d);
        out = (out + d.toString()).slice(-4000);
        if (/listening on/.test(out)) resolve();
      };
      child.stdout?.on('data', read);
      child.stderr?.on('data', read);
      child.once('exit', (code, signal) =>
        reject(new Error(`${this.name} exited (${signal ?? code}) before listening: ${out.trim()}`)),
      );
    });
    const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      await listening;
    } finally {
      clearTimeout(timeout);
    }
    this.nodeId = await nodeIdAt(this.port);
  }

  /** Sends `signal`; resolves once the process is gone. */
  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (child === null) return;
    child.kill(signal);
    await exited(child);
    this.child = null;
  }
}

/** Asks the node on `port` for a session and gives it back: its clientId names the node. */
async function nodeIdAt(port: number): Promise<string> {
  const url = `http://127.0.0.1:${port}/bayeux`;
  const post = async (message: object) => {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([message]),
    });
    return ((await r.json()) as { clientId?: string }[])[0];
  };
  const reply = await post({
    channel: META_HANDSHAKE,
    version: '1.0',
    supportedConnectionTypes: ['long-polling'],
  });
  const clientId = String(reply?.clientId ?? '');
  if (!clientId.includes('.')) throw new Error(`node on port ${port} gave no clientId`);
  await post({ channel: META_DISCONNECT, clientId }).catch(() => undefined);
  return clientId.slice(0, clientId.indexOf('.'));
}

export const randomKey = (): string => randomBytes(18).toString('base64url');
