/**
 * Abuse limits the kernel consults: a publish rate per session, and per client IP a cap
 * on concurrent sessions and a handshake rate. Pure bookkeeping — no timers, no I/O; the
 * kernel calls it at the points listed on `Limiter` and turns a refusal into a Bayeux
 * error reply (`replyFor`). `0` switches a limit off.
 *
 * Memory: a session's publish bucket lives in a `WeakMap` keyed by the session, so it
 * goes with it. Per-IP entries are dropped when their last session closes and their
 * handshake bucket is full again, checked by `prune` (call it from the existing sweep).
 */
import { formatError } from '@bayou/protocol';
import { SERVER_DEFAULTS } from '../defaults.js';
import { invalidOption, rejectUnknownKeys } from '../option-errors.js';
import { type BucketSpec, type BucketState, fullBucket, isFull, take } from './token-bucket.js';

export interface LimitOptions {
  /**
   * Publishes per second one session may sustain (broadcast and service calls). Default
   * `2000`: the load tester's feed scenario publishes 1,000/s from one session.
   */
  publishRate?: number;
  /** Publishes one session may send at once after a quiet period. Default `4000`. */
  publishBurst?: number;
  /**
   * Sessions one client IP may hold at once. Default `10000` (offices and mobile carriers
   * put many users behind one address; the load tester opens 1,000 from one by default).
   */
  maxSessionsPerIp?: number;
  /** Handshakes per second one client IP may sustain. Default `1000` (the load tester's ramp). */
  handshakeRate?: number;
  /** Handshakes one client IP may send at once. Default `2000`. */
  handshakeBurst?: number;
}

/** The limits' defaults (defined in `defaults.ts`). */
export const defaultLimits: Readonly<Required<LimitOptions>> = SERVER_DEFAULTS.limits;

/** What was refused; counted in `LimiterStats` and named in logs. */
export type LimitKind = 'publish' | 'sessions' | 'handshakes';

export interface LimiterStats {
  publishRefused: number;
  sessionsRefused: number;
  handshakesRefused: number;
}

/** A refusal as the kernel sends it: the Bayeux error string and the advice to attach. */
export interface LimitReply {
  error: string;
  advice: { reconnect: 'retry' | 'handshake' | 'none'; interval: number };
}

interface IpEntry {
  sessions: number;
  handshakes: BucketState;
}

export function resolveLimits(input: LimitOptions = {}): Readonly<Required<LimitOptions>> {
  const out = { ...defaultLimits };
  rejectUnknownKeys(input, Object.keys(defaultLimits), 'limits');
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      invalidOption(`limits.${key}`, `a non-negative number`);
    out[key as keyof LimitOptions] = value;
  }
  if (out.publishRate > 0 && out.publishBurst < 1) invalidOption('limits.publishBurst', 'at least 1');
  if (out.handshakeRate > 0 && out.handshakeBurst < 1) invalidOption('limits.handshakeBurst', 'at least 1');
  return Object.freeze(out);
}

export class Limiter {
  readonly options: Readonly<Required<LimitOptions>>;
  readonly stats: LimiterStats = { publishRefused: 0, sessionsRefused: 0, handshakesRefused: 0 };
  private readonly publishSpec: BucketSpec;
  private readonly handshakeSpec: BucketSpec;
  private readonly buckets = new WeakMap<object, BucketState>();
  private readonly ips = new Map<string, IpEntry>();
  private readonly now: () => number;

  constructor(options: LimitOptions = {}, now: () => number = Date.now) {
    this.options = resolveLimits(options);
    this.publishSpec = { rate: this.options.publishRate, burst: this.options.publishBurst };
    this.handshakeSpec = { rate: this.options.handshakeRate, burst: this.options.handshakeBurst };
    this.now = now;
  }

  /**
   * Before a handshake is processed (before `authenticate`): `null` to go on, or the
   * reply to refuse with (`429::handshake_rate_limited`, or `403:<max>:session_limit`).
   * `ip` is `request.ip` (so Fastify's `trustProxy` applies); `undefined` is not limited.
   */
  checkHandshake(ip: string | undefined): LimitReply | null {
    if (ip === undefined) return null;
    const { maxSessionsPerIp, handshakeRate } = this.options;
    if (maxSessionsPerIp === 0 && handshakeRate === 0) return null;
    const entry = this.entry(ip);
    if (maxSessionsPerIp > 0 && entry.sessions >= maxSessionsPerIp) {
      this.stats.sessionsRefused++;
      return {
        error: formatError('sessionLimit', [maxSessionsPerIp]),
        advice: { reconnect: 'handshake', interval: 5000 },
      };
    }
    if (handshakeRate > 0) {
      const wait = take(entry.handshakes, this.handshakeSpec, this.now());
      if (wait > 0) {
        this.stats.handshakesRefused++;
        return {
          error: formatError('rateLimited', ['handshake']),
          advice: { reconnect: 'handshake', interval: Math.min(wait, 60_000) },
        };
      }
    }
    return null;
  }

  /** A session was created for `ip` (the handshake succeeded). */
  sessionOpened(ip: string | undefined): void {
    if (ip === undefined || this.options.maxSessionsPerIp === 0) return;
    this.entry(ip).sessions++;
  }

  /** A session created for `ip` was removed, for whatever reason. Call once per `sessionOpened`. */
  sessionClosed(ip: string | undefined): void {
    if (ip === undefined || this.options.maxSessionsPerIp === 0) return;
    const entry = this.ips.get(ip);
    if (entry === undefined) return;
    entry.sessions = Math.max(0, entry.sessions - 1);
    if (entry.sessions === 0 && isFull(entry.handshakes, this.handshakeSpec, this.now())) this.ips.delete(ip);
  }

  /**
   * Before a client's publish (or service call) on `channel` is processed: `null` to go
   * on, or the reply (`429:<channel>:rate_limited`, advice `retry` after the wait). The
   * session is only a key; any object that lives as long as the session does.
   */
  checkPublish(session: object, channel: string, cost = 1): LimitReply | null {
    if (this.options.publishRate === 0) return null;
    let bucket = this.buckets.get(session);
    const now = this.now();
    if (bucket === undefined) {
      bucket = fullBucket(this.publishSpec, now);
      this.buckets.set(session, bucket);
    }
    const wait = take(bucket, this.publishSpec, now, cost);
    if (wait === 0) return null;
    this.stats.publishRefused++;
    return {
      error: formatError('rateLimited', [channel]),
      advice: { reconnect: 'retry', interval: Number.isFinite(wait) ? Math.min(wait, 60_000) : 60_000 },
    };
  }

  /** Forgets IPs with no session whose handshake bucket has refilled. Call from a periodic sweep. */
  prune(): void {
    const now = this.now();
    for (const [ip, entry] of this.ips)
      if (entry.sessions === 0 && isFull(entry.handshakes, this.handshakeSpec, now)) this.ips.delete(ip);
  }

  /** IPs currently tracked (for tests and a gauge). */
  get trackedIps(): number {
    return this.ips.size;
  }

  /** Sessions currently counted for `ip`. */
  sessionsOf(ip: string): number {
    return this.ips.get(ip)?.sessions ?? 0;
  }

  private entry(ip: string): IpEntry {
    let entry = this.ips.get(ip);
    if (entry === undefined) {
      entry = { sessions: 0, handshakes: fullBucket(this.handshakeSpec, this.now()) };
      this.ips.set(ip, entry);
    }
    return entry;
  }
}
