/**
 * Publishes acknowledged only once replicas hold them. Redis replicates asynchronously, so
 * a primary can acknowledge a write its replicas never got: when Sentinel promotes a
 * replica (or the primary dies), those writes are gone, and a publish the client was told
 * succeeded is never delivered. With `replicaAcks` > 0, each turn's publishes are followed
 * by one `WAIT replicaAcks replicaAckTimeoutMs` on the same connection (so it counts
 * everything the turn wrote), and a publish is acknowledged only when enough replicas
 * confirmed it. A primary that has just been replaced has lost its replicas, so its
 * `WAIT` answers fewer than asked and the turn's publishes are refused (retry later).
 *
 * A primary can also simply have no replica left (the other server died, or has not come
 * back as a replica yet after a failover). Through Sentinel that case is told apart from a
 * replaced primary by asking a Sentinel: when it names this very server as the master, with
 * no failover under way, and the server has fewer replicas connected than asked, publishes
 * are acknowledged without waiting (a failover needs a replica to promote, so none can take
 * them away) until a replica is back in sync (`ROLE`, checked every second, off the publish
 * path). Without Sentinel there is no one to ask, and a publish no replica holds in time is
 * refused.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from './redis-scripts.js';

/** How often a primary confirmed to have no replica to wait for is checked for one, in ms. */
const RECHECK_MS = 1000;

/** Why a turn's publishes were refused: not enough replicas held them in time. */
export class ReplicasBehindError extends Error {
  constructor(got: number, wanted: number, ms: number) {
    super(`only ${got} of ${wanted} replica(s) held the publish within ${ms} ms: publish refused`);
    this.name = 'ReplicasBehindError';
  }
}

/** Where a connection is connected to, as `host:port` (null when it has no socket). */
function peer(cmd: RedisClient): string | null {
  const s = (cmd as Redis).stream;
  if (s?.remotePort === undefined || s.remoteAddress === undefined) return null;
  return `${s.remoteAddress.replace(/^::ffff:/, '')}:${s.remotePort}`;
}

export class ReplicaWait {
  /** This turn's wait, shared by every publish of the turn (null: none asked yet). */
  private turn: Promise<void> | null = null;
  /** The server (`host:port`) a Sentinel confirmed has no replica to wait for, if any. */
  private alone: string | null = null;
  /** The server whose latest `WAIT` was answered by enough replicas, if any. */
  private trusted: string | null = null;

  constructor(
    /** Replicas that must hold a publish; 0 never waits. */
    private readonly wanted: number,
    private readonly timeoutMs: number,
    /** Counts a failed call as an engine error (`RedisCore.track`). */
    private readonly track: <T>(p: Promise<T>) => Promise<T>,
    /** The engine's ioredis options: through Sentinel, its `sentinels` and master `name`. */
    private readonly redis: RedisOptions = {},
  ) {}

  /**
   * Called as a publish is written on `cmd` (before its reply): what the publish must wait
   * for before it is acknowledged, null when nothing. The `WAIT` goes at the end of the
   * turn, after every publish of the turn, so one `WAIT` covers them all.
   */
  after(cmd: RedisClient): Promise<void> | null {
    if (this.wanted === 0) return null;
    if (this.turn !== null) return this.turn;
    const turn = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.turn = null;
        this.settle(cmd).then(resolve, reject);
      });
    });
    // A publish whose own reply failed never awaits the turn: that must not be unhandled.
    turn.catch(() => {});
    this.turn = turn;
    return turn;
  }

  private async settle(cmd: RedisClient): Promise<void> {
    const at = peer(cmd);
    if (this.alone !== null && this.alone === at) return;
    let got = 0;
    // Unless the latest `WAIT` on this server was answered in full, ask first whether it has
    // replicas in sync: a `WAIT` on one that has none (a new primary after a failover, an old
    // one that lost its replica) holds every command behind it, probes too, for its timeout.
    if (this.trusted === at || (await this.track(this.inSync(cmd)))) {
      got = (await this.track(cmd.call('WAIT', this.wanted, this.timeoutMs))) as number;
      if (got >= this.wanted) {
        this.trusted = at;
        return;
      }
    }
    this.trusted = null;
    if (at !== null && (await this.confirmedAlone(cmd, at))) {
      if (this.alone === null) this.watch(cmd);
      this.alone = at;
      return;
    }
    throw new ReplicasBehindError(got, this.wanted, this.timeoutMs);
  }

  /** Every second while alone: back to waiting once enough replicas are in sync again. */
  private watch(cmd: RedisClient): void {
    setTimeout(() => {
      this.inSync(cmd).then(
        (enough) => {
          if (enough || peer(cmd) !== this.alone) this.alone = null;
          else this.watch(cmd);
        },
        () => {
          this.alone = null; // the connection is gone: the next publish waits and asks again
        },
      );
    }, RECHECK_MS).unref();
  }

  /** Whether the server on `cmd` is a master with `wanted` replicas in sync. */
  private async inSync(cmd: RedisClient): Promise<boolean> {
    const role = (await cmd.call('ROLE')) as [string, number, unknown[]];
    return role[0] !== 'master' || role[2].length >= this.wanted;
  }

  /**
   * Whether a Sentinel names the server at `at` as the master, no failover under way, and
   * that server has fewer replicas connected than asked: then there is none to wait for.
   */
  private async confirmedAlone(cmd: RedisClient, at: string): Promise<boolean> {
    const { sentinels, name } = this.redis;
    if (sentinels === undefined || sentinels === null || name === undefined) return false;
    if (await this.track(this.inSync(cmd))) return false;
    for (const s of sentinels) {
      const client = new Redis({
        host: s.host,
        port: s.port,
        password: this.redis.sentinelPassword,
        username: this.redis.sentinelUsername,
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: this.timeoutMs,
        commandTimeout: this.timeoutMs,
      });
      client.on('error', () => {});
      try {
        await client.connect();
        const fields = (await client.call('SENTINEL', 'MASTER', name)) as string[];
        const field = (k: string) => fields[fields.indexOf(k) + 1] ?? '';
        return `${field('ip')}:${field('port')}` === at && !field('flags').includes('failover');
      } catch {
        // That Sentinel is down or does not know the name: ask the next one.
      } finally {
        client.disconnect();
      }
    }
    return false;
  }
}
