/**
 * The cap on channels with history in Redis, kept by each node for the keys it writes:
 * the channels it published to with history, least recently published first, at most
 * `historyChannels`. Past the cap the oldest one's meta and stream are deleted (one DEL,
 * only then; they share a slot), and its next message starts a new epoch, so a client
 * resuming there gets `recovered: false`. Idle channels' keys expire in Redis by
 * themselves; the node forgets them at the same time, at the heartbeat's sweep.
 */
import type { HistoryStats } from '../engine.js';
import { RecencyIndex, type Recent } from '../recency-index.js';
import type { RedisCore } from './redis-core.js';

interface Written extends Recent<Written> {}

/** Entries forgotten by one sweep at most. */
const SWEEP_BUDGET = 100_000;

export class RedisHistoryBound {
  private readonly index: RecencyIndex<Written>;

  constructor(private readonly engine: Pick<RedisCore, 'options' | 'keys' | 'commands' | 'track'>) {
    this.index = new RecencyIndex<Written>(engine.options.historyChannels, (w, why) => {
      if (why === 'evicted') this.delete(w.key);
    });
  }

  /** This node wrote `channel`'s history keys at `now`; Redis keeps them `ttlMs`. */
  wrote(channel: string, ttlMs: number, now: number): void {
    const known = this.index.get(channel);
    if (known !== undefined) this.index.touch(known, ttlMs, now);
    else this.index.add({ key: channel, lastAt: now, ttlMs, older: null, newer: null });
  }

  /** Forgets the channels whose keys Redis has expired by `now`. */
  sweep(now: number): void {
    this.index.sweep(now, SWEEP_BUDGET);
  }

  stats(): HistoryStats {
    return { channels: this.index.size, expired: this.index.expired, evicted: this.index.evicted };
  }

  private delete(channel: string): void {
    const e = this.engine;
    let cmd: ReturnType<typeof e.commands>;
    try {
      cmd = e.commands();
    } catch {
      return; // closed meanwhile: the keys expire with their TTL
    }
    // A failure leaves the keys to their TTL: counted as an engine error, nothing more.
    void e.track(cmd.del(e.keys.meta(channel), e.keys.stream(channel))).catch(() => undefined);
  }
}
