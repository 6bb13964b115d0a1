/**
 * The channels of a memory bus that keep history, bounded twice: a stream idle for its
 * time-to-live is dropped by `sweep`, and past `maxChannels` the least recently published
 * one makes room for a new one. Besides the map by name, the streams form a list in the
 * order of last publication (a publish moves its stream to the newest end), so both find
 * their victims at the oldest end in constant time. (A Map's own insertion order would
 * do in principle, but reaching its first entry after many deletions at the front walks
 * over every deleted slot: tens of µs per eviction at 100,000 channels.)
 *
 * Dropping a stream forgets its epoch, so the table draws epochs from a generation that
 * moves on after every drop: a stream made later never reuses the epoch of one that was
 * dropped, and a position from the lost stream is answered `recovered: false`, never
 * misread. Streams made between two drops share one epoch string, which costs nothing:
 * a (channel, epoch) pair still names one stream.
 */
import { randomBytes } from 'node:crypto';
import type { HistoryPolicy, HistoryStats, Publication } from '../engine.js';
import { MemoryStream } from './memory-stream.js';

export interface StreamTableOptions {
  /** Most channels with history at once. */
  readonly maxChannels: number;
  /** ms a stream that was only read (a subscribe asked its position) keeps its epoch. */
  readonly idleTtlMs: number;
}

/** Streams looked at by one sweep at most, so a sweep never blocks the loop for long. */
const SWEEP_BUDGET = 100_000;

export class StreamTable {
  private readonly streams = new Map<string, MemoryStream>();
  /** The least and the most recently published streams. */
  private oldest: MemoryStream | null = null;
  private newest: MemoryStream | null = null;
  /** Random per table, so epochs of another process (or table) never match. */
  private readonly base = randomBytes(6).toString('base64url');
  private generation = 0;
  private epoch = `${this.base}0`;
  /** The shortest time-to-live any stream may have: no stream idle for less can expire. */
  private minTtlMs: number;
  private expired = 0;
  private evicted = 0;

  constructor(private readonly options: StreamTableOptions) {
    this.minTtlMs = options.idleTtlMs;
  }

  /** Appends `payload` to `channel`'s stream (made when missing) and marks it most recent. */
  publish(channel: string, payload: string, policy: HistoryPolicy, now: number): Publication {
    let stream = this.streams.get(channel);
    if (stream === undefined) stream = this.create(channel, now);
    else if (stream !== this.newest) {
      this.unlink(stream);
      this.append(stream);
    }
    if (policy.ttlMs < this.minTtlMs) this.minTtlMs = policy.ttlMs;
    return stream.append(payload, policy, now);
  }

  /** `channel`'s stream for reading; a missing one is made, so its position holds until a publish. */
  read(channel: string, now: number): MemoryStream {
    return this.streams.get(channel) ?? this.create(channel, now);
  }

  /** Drops the streams idle for their time-to-live (oldest first, within a budget). */
  sweep(now: number): void {
    let dropped = 0;
    let seen = 0;
    let stream = this.oldest;
    while (stream !== null) {
      const idle = now - stream.lastAt;
      // Newer streams were published to later still: none of them can have expired.
      if (idle < this.minTtlMs || ++seen > SWEEP_BUDGET) break;
      const next = stream.newer;
      if (idle >= stream.ttlMs) {
        this.drop(stream);
        dropped++;
      }
      stream = next;
    }
    if (dropped > 0) {
      this.expired += dropped;
      this.nextEpoch();
    }
  }

  stats(): HistoryStats {
    return { channels: this.streams.size, expired: this.expired, evicted: this.evicted };
  }

  private create(channel: string, now: number): MemoryStream {
    if (this.streams.size >= this.options.maxChannels && this.oldest !== null) {
      this.drop(this.oldest);
      this.evicted++;
      this.nextEpoch();
    }
    const stream = new MemoryStream(channel, this.epoch, now, this.options.idleTtlMs);
    this.streams.set(channel, stream);
    this.append(stream);
    return stream;
  }

  private drop(stream: MemoryStream): void {
    this.streams.delete(stream.channel);
    this.unlink(stream);
  }

  private append(stream: MemoryStream): void {
    stream.older = this.newest;
    stream.newer = null;
    if (this.newest !== null) this.newest.newer = stream;
    else this.oldest = stream;
    this.newest = stream;
  }

  private unlink(stream: MemoryStream): void {
    if (stream.older !== null) stream.older.newer = stream.newer;
    else this.oldest = stream.newer;
    if (stream.newer !== null) stream.newer.older = stream.older;
    else this.newest = stream.older;
    stream.older = null;
    stream.newer = null;
  }

  private nextEpoch(): void {
    this.generation++;
    this.epoch = `${this.base}${this.generation.toString(36)}`;
  }
}
