/**
 * Every option of the Redis engine, with its default, in one place. `resolveRedisOptions`
 * merges the defaults, rejects unknown keys and bad values with a `BayouConfigError` that names
 * the option, and returns a frozen object.
 */
import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import { SERVER_DEFAULTS } from '../../defaults.js';
import { scopedInvalid, unknownOptions } from '../../option-errors.js';
import { isSentinelUrl, sentinelOptions, URL_FORMS } from './redis-sentinel.js';

export interface RedisEngineOptions {
  /**
   * Where Redis is: `redis://[user:pass@]host:port[/db]`, `rediss://…` for TLS, or
   * `redis+sentinel://[user:pass@]host:port[,host:port…]/<master name>[/db]` for a Redis
   * watched by Sentinel (the hosts are the Sentinels). Default: none, so `redis` says
   * where, or else `redis://127.0.0.1:6379`. Ignored with `cluster`.
   */
  url?: string;
  /**
   * ioredis connection options (host, port, tls, password…); what `url` says takes
   * precedence. The engine sets its own queueing and retry options. Default: none.
   */
  redis?: RedisOptions;
  /**
   * A Redis Cluster instead of one server: its seed nodes and ioredis cluster options.
   * Implies `sharded: true`. Default: none (one server).
   */
  cluster?: { nodes: ClusterNode[]; options?: ClusterOptions };
  /** Prefix of every key and pub/sub channel, so several Bayou clusters can share a Redis. Default: `bayou:`. */
  keyPrefix?: string;
  /** Milliseconds between two liveness heartbeats of this node. Default: 1000. */
  heartbeatMs?: number;
  /**
   * Milliseconds after its last heartbeat when a node counts as dead: its subscriber
   * counts, members and leases are then ignored and cleaned, and its sessions unknown.
   * Must exceed `heartbeatMs`. Default: 5000.
   */
  nodeTtlMs?: number;
  /**
   * Milliseconds a Redis command may take before it fails (calls fail at once while
   * Redis is unreachable, whatever this says). Default: 5000.
   */
  commandTimeoutMs?: number;
  /**
   * Use sharded pub/sub (`SSUBSCRIBE`/`SPUBLISH`, Redis 7+), which a Redis Cluster
   * spreads over its shards instead of sending every message to every shard. Default:
   * `false` for one server, `true` with `cluster`.
   */
  sharded?: boolean;
  /**
   * Milliseconds a channel's history epoch (its offset counter) outlives the channel's
   * last publication, at least the history's `ttlMs`: after that an idle channel has no
   * key left in Redis, and a client resuming from an older position gets `recovered: false`.
   * Longer lets clients of quiet channels resume with `recovered: true` for that long, at
   * the cost of one small hash per channel. Default: 120000 (the server's default
   * `historyTtl`; the plugin and CLI pass their `historyTtl`).
   */
  epochTtlMs?: number;
  /**
   * Most channels this node keeps history keys for in Redis: past it, the keys of the
   * channel it published to least recently are deleted (one `DEL`), so clients resuming
   * there get `recovered: false`. Idle channels' keys expire by themselves whatever this
   * says. A cluster holds at most this many per publishing node (a cluster-wide list
   * would cost every publish a command on one shared key; Redis's `maxmemory` with a
   * `volatile-*` policy bounds the cluster instead, see docs/cluster.md). Default: 100000
   * (the plugin and CLI pass their `historyChannels`).
   */
  historyChannels?: number;
  /**
   * Milliseconds a node waits for more of a batch of its own publishes (those it made in
   * one event-loop turn, which leave in one write) when Redis wrote it back in parts, as it
   * does past 16 KB of commands, before delivering what came; 0 never waits. A batch that
   * comes back whole, as a few publishes do, never waits. Default: 1.
   */
  batchWindowMs?: number;
  /**
   * Milliseconds between two delivery probes (`redis-probe.ts`): the node publishes a probe
   * to itself and expects it back on its subscriber connection within this time; one that
   * does not come back makes the node not ready (`/readyz` 503) and reconnects that
   * connection. Probes go only while the node follows a channel; 0 turns them off.
   * Default: 5000.
   */
  probeIntervalMs?: number;
  /**
   * How many replicas must hold a publish before it is acknowledged (`WAIT` after each
   * turn's publishes): a primary that Sentinel replaced, or that died, can otherwise
   * acknowledge a publish its successor never got. One that is not held in time is
   * refused (503, publish again). Default: 1 through Sentinel, else 0 (not with `cluster`).
   */
  replicaAcks?: number;
  /** Milliseconds a turn's publishes wait for `replicaAcks` replicas before they are refused. Default: 500. */
  replicaAckTimeoutMs?: number;
}

export interface ResolvedRedisOptions {
  readonly url: string | null;
  readonly redis: RedisOptions;
  readonly cluster: { nodes: ClusterNode[]; options?: ClusterOptions } | null;
  readonly keyPrefix: string;
  readonly heartbeatMs: number;
  readonly nodeTtlMs: number;
  readonly commandTimeoutMs: number;
  readonly sharded: boolean;
  readonly epochTtlMs: number;
  readonly historyChannels: number;
  readonly batchWindowMs: number;
  readonly probeIntervalMs: number;
  readonly replicaAcks: number;
  readonly replicaAckTimeoutMs: number;
}

/** The Redis engine's defaults (defined in `defaults.ts`). */
const defaults = SERVER_DEFAULTS.redisEngine;
export const REDIS_ENGINE_DEFAULTS = defaults;

const known = new Set([...Object.keys(defaults), 'redis', 'cluster', 'sharded']);

const invalid: (name: string, expected: string) => never = scopedInvalid('redisEngine');

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    invalid(name, 'a positive integer');
  return value;
}

function nonNegative(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) invalid(name, 'a number ≥ 0');
  return value;
}

function wholeOrZero(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    invalid(name, 'an integer ≥ 0 (0 = off)');
  return value;
}

export function resolveRedisOptions(input: RedisEngineOptions = {}): ResolvedRedisOptions {
  if (typeof input !== 'object' || input === null) invalid('options', 'an object');
  const unknown = Object.keys(input).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    unknownOptions(`unknown Redis engine option(s): ${unknown.join(', ')}`);
  }
  const o = { ...defaults, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
  if (o.url !== null && (typeof o.url !== 'string' || !/^(rediss?|redis\+sentinel):\/\//.test(o.url))) {
    invalid('url', URL_FORMS);
  }
  let sentinel = {};
  if (o.url !== null && isSentinelUrl(o.url)) {
    try {
      sentinel = sentinelOptions(o.url);
    } catch (err) {
      invalid(
        'url',
        `redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>]: ${(err as Error).message}`,
      );
    }
  }
  if (typeof o.keyPrefix !== 'string' || /[{}\s]/.test(o.keyPrefix)) {
    invalid('keyPrefix', 'a string without braces or spaces');
  }
  const heartbeatMs = positive('heartbeatMs', o.heartbeatMs);
  const nodeTtlMs = positive('nodeTtlMs', o.nodeTtlMs);
  if (nodeTtlMs <= heartbeatMs) invalid('nodeTtlMs', `more than heartbeatMs (${heartbeatMs})`);
  const cluster = input.cluster ?? null;
  if (cluster !== null && (!Array.isArray(cluster.nodes) || cluster.nodes.length === 0)) {
    invalid('cluster', 'an object { nodes: [at least one node], options? }');
  }
  if (input.redis !== undefined && (typeof input.redis !== 'object' || input.redis === null)) {
    invalid('redis', 'an ioredis options object');
  }
  if (input.redis?.keyPrefix !== undefined)
    invalid('redis.keyPrefix', 'left out: use the engine option keyPrefix');
  if (input.sharded !== undefined && typeof input.sharded !== 'boolean') invalid('sharded', 'a boolean');
  if (cluster !== null && input.sharded === false) invalid('sharded', 'true (or left out) with cluster');
  const redis = { ...(input.redis ?? {}), ...sentinel };
  const replicaAcks = o.replicaAcks === null ? (redis.sentinels === undefined ? 0 : 1) : o.replicaAcks;
  if (wholeOrZero('replicaAcks', replicaAcks) > 0 && cluster !== null)
    invalid('replicaAcks', '0 with cluster');
  return Object.freeze({
    // ioredis takes a Sentinel setup as options, not as a URL.
    url: o.url !== null && isSentinelUrl(o.url) ? null : o.url,
    redis,
    cluster,
    keyPrefix: o.keyPrefix,
    heartbeatMs,
    nodeTtlMs,
    commandTimeoutMs: positive('commandTimeoutMs', o.commandTimeoutMs),
    sharded: input.sharded ?? cluster !== null,
    epochTtlMs: positive('epochTtlMs', o.epochTtlMs),
    historyChannels: positive('historyChannels', o.historyChannels),
    batchWindowMs: nonNegative('batchWindowMs', o.batchWindowMs),
    probeIntervalMs: wholeOrZero('probeIntervalMs', o.probeIntervalMs),
    replicaAcks,
    replicaAckTimeoutMs: positive('replicaAckTimeoutMs', o.replicaAckTimeoutMs),
  });
}
