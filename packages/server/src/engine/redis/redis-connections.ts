/**
 * The two connections of a node: one for commands, one in subscriber mode (for a Redis
 * Cluster, ioredis cluster clients with sharded subscribers). Both fail fast while Redis
 * is unreachable (no offline queue, no resending), so a call during an outage rejects at
 * once and the kernel answers with an error instead of waiting.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { ResolvedRedisOptions } from './redis-options.js';
import type { RedisClient } from './redis-scripts.js';

/** Reconnect soon after an outage: delivery must resume within seconds of Redis returning. */
function retryStrategy(times: number): number {
  return Math.min(100 * times, 1000);
}

function failFast(options: ResolvedRedisOptions): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    autoResubscribe: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    retryStrategy,
  };
}

export function createClient(options: ResolvedRedisOptions, name: string): RedisClient {
  if (options.cluster !== null) {
    return new Cluster(options.cluster.nodes, {
      ...options.cluster.options,
      lazyConnect: true,
      enableOfflineQueue: false,
      shardedSubscribers: true,
      clusterRetryStrategy: retryStrategy,
      redisOptions: {
        ...options.cluster.options?.redisOptions,
        ...failFast(options),
        connectionName: name,
      },
    });
  }
  const redis = { ...options.redis, ...failFast(options), connectionName: name };
  const client = options.url === null ? new Redis(redis) : new Redis(options.url, redis);
  readOnFastPath(client);
  return client;
}

const noop = (): void => undefined;

/**
 * ioredis (since 5.4.2, redis/ioredis#1937) attaches its reply parser to a new socket with
 * `prependListener('data')` and `resume()`. Node's readable stream emits a chunk the
 * moment it is read only when a `'data'` listener was added through `on`; otherwise each
 * chunk from Redis is buffered and emitted a tick later through `read()` (a `nextTick`,
 * `emitReadable`, `flow` and a buffer list per read: a few microseconds of every reply and
 * every pub/sub message). An empty listener added with `on` at each connect puts the
 * socket back on that path; ioredis' parser still runs first.
 */
export function readOnFastPath(client: Redis): void {
  client.on('connect', () => {
    const stream = client.stream;
    if (stream !== undefined && !stream.listeners('data').includes(noop)) stream.on('data', noop);
  });
}

/**
 * Connects `client`, or rejects and stops it (no reconnect loop behind a failed start). It
 * rejects with the socket's own error (`connect ECONNREFUSED 127.0.0.1:6379`, `getaddrinfo
 * ENOTFOUND`, `WRONGPASS`…) rather than ioredis's `Connection is closed.`, which says nothing.
 */
export async function connect(client: RedisClient): Promise<void> {
  let first: Error | null = null;
  const remember = (err: Error) => {
    first ??= err;
  };
  client.on('error', remember);
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw first ?? err;
  } finally {
    client.off('error', remember);
  }
}

/**
 * ioredis (5.x) keeps a Redis Cluster's shard channels across a reconnect and resubscribes
 * them itself; each one the engine subscribes again after the reconnect (it must know when
 * they are on before it catches up) was appended to that list once more, so the list grew
 * by every followed channel at each reconnect, and ioredis resent them all at the next.
 * Keeps each channel once; does nothing if ioredis keeps them some other way.
 */
export function dedupeShardChannels(client: RedisClient): void {
  const channels = (client as { shardedSubscribers?: { channels?: unknown } }).shardedSubscribers?.channels;
  if (!(channels instanceof Map)) return;
  for (const [slot, list] of channels) if (Array.isArray(list)) channels.set(slot, [...new Set(list)]);
}

export function isReady(client: RedisClient): boolean {
  return client.status === 'ready';
}

/** Where the engine's Redis is, for logs and errors: never with its password. */
export function describeRedis(options: ResolvedRedisOptions): string {
  if (options.cluster !== null)
    return `Redis Cluster ${options.cluster.nodes.map((n) => (typeof n === 'object' ? `${n.host ?? '127.0.0.1'}:${n.port ?? 6379}` : String(n))).join(',')}`;
  if (options.url !== null) return options.url.replace(/\/\/[^@/]*@/, '//***@');
  const { sentinels, name, host, port } = options.redis;
  if (sentinels !== undefined)
    return `Sentinel master ${name} via ${sentinels.map((s) => `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`).join(',')}`;
  return `redis://${host ?? '127.0.0.1'}:${port ?? 6379}`;
}
