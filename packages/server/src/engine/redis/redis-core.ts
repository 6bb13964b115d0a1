/**
 * What the Redis engine's parts (broker, history, presence, directory, leases) need of the
 * engine that holds them: its connections, names, options and counters. The parts depend
 * on this interface, not on `RedisEngine`, so imports point one way.
 */
import type { EngineNode, History } from '../engine.js';
import type { RedisKeys } from './redis-keys.js';
import type { ResolvedRedisOptions } from './redis-options.js';
import type { RedisClient } from './redis-scripts.js';

export interface RedisCore {
  readonly options: ResolvedRedisOptions;
  readonly stats: { errors: number; reconnects: number };
  readonly keys: RedisKeys;
  readonly history: History;
  /** The cap on channels with history keys this node wrote (`RedisHistoryBound`). */
  readonly historyBound: { wrote(channel: string, ttlMs: number, now: number): void };
  /** The subscriber connection (set by `start`). */
  readonly sub: RedisClient | null;
  /** The command connection (set by `start`). */
  readonly cmd: RedisClient | null;
  /** Live node ids as of the latest heartbeat. */
  readonly live: Set<string>;
  /** The node this engine serves; throws before `start` and after `close`. */
  node(): EngineNode;
  /** The command connection of a started engine. */
  commands(): RedisClient;
  /** Counts a failed call as an engine error and passes the promise on. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** A name's pub/sub name is followed now (`yes`) or no longer, its node's inbox aside. */
  followed?(topic: string, yes: boolean): void;
  /** Refreshes this node's liveness and reads the live nodes. */
  heartbeat(): Promise<Set<string>>;
}
