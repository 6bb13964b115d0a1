/**
 * The channels of a memory bus that keep history, bounded twice (a `RecencyIndex`): a
 * stream idle for its time-to-live is dropped by `sweep`, and past `maxChannels` the
 * least recently published one makes room for a new one.
 *
 * Dropping a stream forgets its epoch, so the table draws epochs from a generation that
 * moves on after every drop: a stream made later never reuses the epoch of one that was
 * dropped, and a position from the lost stream is answered `recovered: false`, never
 * misread. Streams made between two drops share one epoch string, which costs nothing:
 * a (channel, epoch) pair still names one stream.
 */
import { randomBytes } from 'node:crypto';
import type { HistoryPolicy, HistoryStats, Publication } from '../engine.js';
import { RecencyIndex } from '../recency-index.js';
import { MemoryStream } from './memory-stream.js';

export interface StreamTableOptions {
  /** Most channels with history at once. */
  readonly maxChannels: number;
  /** ms a stream that was only read (a subscribe asked its position) keeps its epoch. */
  readonly idleTtlMs: number;
}

/** Streams dropped by one sweep at most, so a sweep never blocks the loop for long. */
const SWEEP_BUDGET = 100_000;

export class StreamTable {
  private readonly index: RecencyIndex<MemoryStream>;
  /** Random per table, so epochs of another process (or table) never match. */
  private readonly base = randomBytes(6).toString('base64url');
  private generation = 0;
  private epoch = `${this.base}0`;
  /** Whether a stream was dropped since `epoch` was drawn. */
  private stale = false;

  constructor(private readonly options: StreamTableOptions) {
    this.index = new RecencyIndex(options.maxChannels, () => {
      this.stale = true;
    });
  }

  /** Appends `payload` to `channel`'s stream (made when missing) and marks it most recent. */
  publish(channel: string, payload: string, policy: HistoryPolicy, now: number): Publication {
    const stream = this.index.get(channel) ?? this.create(channel, now);
    this.index.touch(stream, policy.ttlMs, now);
    return stream.append(payload, policy, now);
  }

  /** `channel`'s stream for reading; a missing one is made, so its position holds until a publish. */
  read(channel: string, now: number): MemoryStream {
    return this.index.get(channel) ?? this.create(channel, now);
  }

  /** Drops the streams idle for their time-to-live. */
  sweep(now: number): void {
    this.index.sweep(now, SWEEP_BUDGET);
  }

  stats(): HistoryStats {
    return { channels: this.index.size, expired: this.index.expired, evicted: this.index.evicted };
  }

  private create(channel: string, now: number): MemoryStream {
    this.index.makeRoom();
    if (this.stale) {
      this.stale = false;
      this.generation++;
      this.epoch = `${this.base}${this.generation.toString(36)}`;
    }
    const stream = new MemoryStream(channel, this.epoch, now, this.options.idleTtlMs);
    this.index.add(stream);
    return stream;
  }
}
