/**
 * A private redis-server for a test run: started on a free loopback port without
 * persistence, waited on until it answers PING, killed by pid at the end. It can be
 * killed and started again on the same port (an outage). `REDIS_SERVER_PATH` (set by
 * scripts/services.mjs) names the program; under CI=true a missing one is a failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from '../../../scripts/eventually.mjs';
import { freePort, programPath } from './programs.js';

export const ci = process.env.CI === 'true' || process.env.CI === '1';

/** The redis-server program, or null when this machine has none. */
export function redisServerPath(): string | null {
  return programPath('redis-server', 'REDIS_SERVER_PATH');
}

/** Whether a Redis answers PING on `port`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) done(data.startsWith('+PONG'));
    });
  });
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live)
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
});

export class RedisServer {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    private readonly program: string,
    readonly port: number,
    private readonly extra: readonly string[],
    private readonly config: string | null,
  ) {}

  /**
   * Starts a redis-server on a free port (or `port`), with `extra` arguments (and the
   * configuration file `config` first, as a Sentinel needs), resolved once it answers PING.
   */
  static async start(port?: number, extra: readonly string[] = [], config?: string): Promise<RedisServer> {
    const program = redisServerPath();
    if (program === null)
      throw new Error('redis-server not found: run the tests through `npm test`, which installs it');
    const server = new RedisServer(program, port ?? (await freePort()), extra, config ?? null);
    await server.run();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Kills the server at once (SIGKILL by pid): an outage, with everything it held lost. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child?.pid === undefined) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
    await this.exited;
  }

  /** Starts it again on the same port, empty. */
  async restart(): Promise<void> {
    await this.kill();
    await this.run();
  }

  async stop(): Promise<void> {
    await this.kill();
  }

  private async run(): Promise<void> {
    const args = [
      ...(this.config === null ? [] : [this.config]),
      ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...this.extra,
    ];
    const child = spawn(this.program, [...args, '--loglevel', 'warning'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (c) => {
      stderr += c;
    });
    live.add(child);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        live.delete(child);
        resolve();
      }),
    );
    this.child = child;
    const up = await eventually(
      async () => child.exitCode !== null || (await ping(this.port)),
      10_000,
      'redis-server to answer',
      25,
    ).catch(() => false);
    if (!up || child.exitCode !== null) {
      await this.kill();
      throw new Error(`redis-server did not start on port ${this.port}: ${stderr.trim()}`);
    }
  }
}

/** Whether nothing listens on loopback `port` right now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createTcpServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a Redis Cluster node: at most 55535, with its cluster bus port (10,000
 * higher) free too. redis-server refuses a higher one ("Redis port number too high"), and
 * the kernel hands out ports up to 60999: with a plain free port, 6 of about 40 starts of
 * redis-cluster-probe.test.ts failed ("redis-server did not start").
 */
async function freeClusterPort(): Promise<number> {
  for (let tries = 0; tries < 1000; tries++) {
    const port = await freePort();
    if (port <= 55535 && (await portFree(port + 10000))) return port;
  }
  throw new Error('no free loopback port at or below 55535 with its cluster bus port free');
}

/**
 * A Redis Cluster of `size` masters (no replicas) on free loopback ports, its slots split
 * evenly, resolved once every node reports `cluster_state:ok`.
 */
export class RedisClusterServers {
  private constructor(
    readonly servers: RedisServer[],
    private readonly dir: string,
  ) {}

  static async start(size = 3): Promise<RedisClusterServers> {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-redis-cluster-'));
    const servers: RedisServer[] = [];
    const cluster = new RedisClusterServers(servers, dir);
    try {
      for (let i = 0; i < size; i++) {
        const port = await freeClusterPort();
        const args = [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
        ];
        servers.push(await RedisServer.start(port, args));
      }
      await cluster.form();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get nodes(): { host: string; port: number }[] {
    return this.servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
  }

  async stop(): Promise<void> {
    for (const s of this.servers) await s.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async form(): Promise<void> {
    const admins = this.servers.map((s) => new Redis(s.port, '127.0.0.1'));
    try {
      const per = Math.ceil(16384 / admins.length);
      for (const [i, admin] of admins.entries()) {
        await admin.call('CLUSTER', 'ADDSLOTSRANGE', i * per, Math.min(16383, (i + 1) * per - 1));
      }
      for (const s of this.servers.slice(1)) await admins[0]?.call('CLUSTER', 'MEET', '127.0.0.1', s.port);
      await eventually(
        async () => {
          const infos = await Promise.all(admins.map((a) => a.call('CLUSTER', 'INFO') as Promise<string>));
          const ok = infos.every(
            (info) =>
              info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${admins.length}`),
          );
          if (!ok) throw new Error(`Redis Cluster did not form: ${infos.join(' | ')}`);
        },
        20_000,
        'the Redis Cluster',
        100,
      );
    } finally {
      for (const a of admins) a.disconnect();
    }
  }
}

/**
 * A primary and its replica, in sync as the primary sees it (the replica listed by `ROLE`,
 * which lists only replicas online), in a temporary directory for replication's snapshot
 * files. Every step of undoing it is pushed on `cleanup`, to run in reverse order.
 */
export async function primaryWithReplica(
  cleanup: (() => Promise<unknown> | unknown)[],
): Promise<{ dir: string; primary: RedisServer; replica: RedisServer; onReplica: Redis }> {
  const dir = mkdtempSync(join(tmpdir(), 'bayou-replica-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const primary = await RedisServer.start(undefined, ['--dir', dir, '--repl-diskless-sync-delay', '0']);
  cleanup.push(() => primary.stop());
  const replica = await RedisServer.start(undefined, [
    '--dir',
    dir,
    '--replicaof',
    '127.0.0.1',
    String(primary.port),
  ]);
  cleanup.push(() => replica.stop());
  const onReplica = new Redis(replica.port, '127.0.0.1');
  cleanup.push(() => onReplica.disconnect());
  const onPrimary = new Redis(primary.port, '127.0.0.1');
  try {
    await eventually(async () => {
      const role = (await onPrimary.call('ROLE')) as [string, number, unknown[]];
      if (role[2].length !== 1) throw new Error('the replica is not in sync yet');
    }, 15_000);
  } finally {
    onPrimary.disconnect();
  }
  return { dir, primary, replica, onReplica };
}
