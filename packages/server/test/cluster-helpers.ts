/**
 * Three (or n) Bayou nodes on one real Redis, each a `createServer({ redis })`, behind
 * the round-robin balancer. Each cluster gets its own key prefix, so suites can share a
 * redis-server. Engine timings are short so a dead node is noticed within a second.
 */
import type { Socket } from 'node:net';
import type { BayouClient } from '@bayou/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type BayouServer, type CreateServerOptions, createServer, type RedisEngine } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { ci, RedisServer, redisServerPath } from './redis-server.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

// One `eventually` for the server's tests: it retries while the check throws or returns false.
export { eventually } from './interop-helpers.js';

export const redisAvailable = redisServerPath() !== null;

/** Under CI a missing redis-server fails the suite; elsewhere the suite says why it has no tests. */
export function requireRedis(suite: string): void {
  if (!redisAvailable && ci) {
    describe(suite, () => {
      it('needs redis-server under CI', () => {
        throw new Error('redis-server not found; scripts/services.mjs installs it through apt-get');
      });
    });
  }
}

/**
 * One redis-server for the test file (or the `describe` it is called in): started before
 * its tests when there is one, stopped after them. The getter gives the running server,
 * and fails the test that asks for it when there is none.
 */
export function redisPerFile(): () => RedisServer {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    if (redisAvailable) redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return () => {
    if (redis === undefined) throw new Error('no redis-server running: scripts/services.mjs installs it');
    return redis;
  };
}

/** Disconnects and forgets every client of `clients`, giving each at most 1 s. */
export async function disconnectAll(clients: BayouClient[]): Promise<void> {
  for (const c of clients.splice(0)) await Promise.race([c.disconnect().catch(() => undefined), sleep(1000)]);
}

export interface Node {
  name: string;
  server: BayouServer;
  base: string;
  port: number;
  engine: RedisEngine;
  killed: boolean;
  /** Every TCP connection the node accepted (upgraded WebSockets included). */
  sockets: Set<Socket>;
}

export interface Cluster {
  nodes: Node[];
  balancer: RoundRobinBalancer;
  /** The balancer's Bayeux endpoint. */
  url: string;
  /** Kills `node` as a crash would: its Redis connections drop without a goodbye, its HTTP server stops. */
  kill(node: Node): Promise<void>;
  close(): Promise<void>;
}

let prefixes = 0;

export async function startCluster(
  redis: RedisServer,
  size = 3,
  options: CreateServerOptions = {},
  setup?: (server: BayouServer, index: number) => void,
): Promise<Cluster> {
  const keyPrefix = `c${process.pid}.${++prefixes}:`;
  const nodes: Node[] = [];
  for (let i = 0; i < size; i++) {
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      timeout: 2000,
      sweepInterval: 50,
      maxInterval: 3000,
      redis: redis.url,
      redisEngine: {
        keyPrefix,
        heartbeatMs: 100,
        nodeTtlMs: 1000,
        commandTimeoutMs: 2000,
      },
      ...options,
    });
    setup?.(server, i);
    const sockets = new Set<Socket>();
    server.app.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    const base = await server.listen();
    const engine = operationsOf(server.app).engine as RedisEngine;
    const port = Number(new URL(base).port);
    nodes.push({ name: `node${i}`, server, base, port, engine, killed: false, sockets });
  }
  const balancer = await RoundRobinBalancer.start(nodes.map((n) => ({ name: n.name, port: n.port })));
  return {
    nodes,
    balancer,
    url: `${balancer.base}/bayeux`,
    async kill(node) {
      node.killed = true;
      node.engine.disconnect();
      const closed = new Promise<void>((resolve) => node.server.app.server.close(() => resolve()));
      for (const socket of node.sockets) socket.destroy();
      await closed;
    },
    async close() {
      await balancer.close();
      for (const n of nodes) {
        if (n.killed) {
          await n.server.close().catch(() => undefined);
          continue;
        }
        n.server.app.server.closeAllConnections();
        await n.server.close().catch(() => undefined);
      }
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface NumberedStream {
  /** Messages acknowledged so far: they carry `n` = 0 … sent − 1, in order. */
  readonly sent: number;
  /** Stops publishing; resolves with the final count once the last publish settled. */
  stop(): Promise<number>;
}

/**
 * Publishes `{ n }` every `everyMs` through `publish` until stopped; a publish that fails
 * (its node or Redis gone) is tried again with the same `n`, so the acknowledged messages
 * are exactly 0 … sent − 1.
 */
export function numberedStream(
  publish: (data: { n: number }) => Promise<unknown>,
  everyMs = 20,
): NumberedStream {
  let sent = 0;
  let streaming = true;
  const loop = (async () => {
    while (streaming) {
      if (
        await publish({ n: sent }).then(
          () => true,
          () => false,
        )
      )
        sent++;
      await sleep(everyMs);
    }
  })();
  return {
    get sent() {
      return sent;
    },
    async stop() {
      streaming = false;
      await loop;
      return sent;
    },
  };
}
