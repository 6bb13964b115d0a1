/**
 * The channels of a memory bus that keep history, bounded twice: a stream idle for its
 * time-to-live is dropped by `sweep`, and past `maxChannels` the least recently published
 * one makes room for a new one.
 *
 * Streams are listed by time-to-live (one list per distinct TTL: the default, each
 * history rule's, and the idle TTL of streams only read), each list in the order of last
 * publication. The front of a list is the next of its streams to expire, so a sweep
 * touches only what it drops, and the least recently published stream of all is the
 * oldest of the few list fronts.
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
import { StreamList } from './stream-list.js';

export interface StreamTableOptions {
  /** Most channels with history at once. */
  readonly maxChannels: number;
  /** ms a stream that was only read (a subscribe asked its position) keeps its epoch. */
  readonly idleTtlMs: number;
}

/** Streams dropped by one sweep at most, so a sweep never blocks the loop for long. */
const SWEEP_BUDGET = 100_000;

export class StreamTable {
  private readonly streams = new Map<string, MemoryStream>();
  /** TTL → its streams, least recently published first. */
  private readonly lists = new Map<number, StreamList>();
  /** Random per table, so epochs of another process (or table) never match. */
  private readonly base = randomBytes(6).toString('base64url');
  private generation = 0;
  private epoch = `${this.base}0`;
  private expired = 0;
  private evicted = 0;

  constructor(private readonly options: StreamTableOptions) {}

  /** Appends `payload` to `channel`'s stream (made when missing) and marks it most recent. */
  publish(channel: string, payload: string, policy: HistoryPolicy, now: number): Publication {
    const stream = this.streams.get(channel) ?? this.create(channel, now);
    this.list(stream.ttlMs).unlink(stream);
    const publication = stream.append(payload, policy, now);
    this.list(stream.ttlMs).append(stream);
    return publication;
  }

  /** `channel`'s stream for reading; a missing one is made, so its position holds until a publish. */
  read(channel: string, now: number): MemoryStream {
    return this.streams.get(channel) ?? this.create(channel, now);
  }

  /** Drops the streams idle for their time-to-live (at most `SWEEP_BUDGET`; the rest next time). */
  sweep(now: number): void {
    let dropped = 0;
    for (const [ttlMs, list] of this.lists) {
      let stream = list.oldest;
      while (stream !== null && now - stream.lastAt >= ttlMs && dropped < SWEEP_BUDGET) {
        const next = stream.newer;
        this.drop(stream, list);
        dropped++;
        stream = next;
      }
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
    if (this.streams.size >= this.options.maxChannels) this.evictOldest();
    const stream = new MemoryStream(channel, this.epoch, now, this.options.idleTtlMs);
    this.streams.set(channel, stream);
    this.list(stream.ttlMs).append(stream);
    return stream;
  }

  /** Drops the least recently published stream: the oldest of the lists' fronts. */
  private evictOldest(): void {
    let victim: MemoryStream | null = null;
    let from: StreamList | null = null;
    for (const list of this.lists.values()) {
      const s = list.oldest;
      if (s !== null && (victim === null || s.lastAt < victim.lastAt)) {
        victim = s;
        from = list;
      }
    }
    if (victim === null || from === null) return;
    this.drop(victim, from);
    this.evicted++;
    this.nextEpoch();
  }

  private drop(stream: MemoryStream, list: StreamList): void {
    this.streams.delete(stream.channel);
    list.unlink(stream);
  }

  private list(ttlMs: number): StreamList {
    let list = this.lists.get(ttlMs);
    if (list === undefined) {
      list = new StreamList();
      this.lists.set(ttlMs, list);
    }
    return list;
  }

  private nextEpoch(): void {
    this.generation++;
    this.epoch = `${this.base}${this.generation.toString(36)}`;
  }
}
