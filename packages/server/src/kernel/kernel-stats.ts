/** The kernel's counters: plain fields the hot paths bump, read by the facade's `stats()` and the metrics at scrape time. */
import type { RemovalReason } from '../types.js';

/** Upper bounds (seconds) of the service time histogram. */
export const SERVICE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] as const;
/** Upper bounds (seconds) of the publish-to-socket-write histogram. */
export const WRITE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] as const;

export type HandshakeResult = 'accepted' | 'denied' | 'failed';

export class KernelStats {
  messagesIn = 0;
  slowConsumers = 0;
  publishes = 0;
  engineErrors = 0;
  /** Sessions ended, by reason. */
  readonly removed: Record<RemovalReason, number> = {
    disconnect: 0,
    timeout: 0,
    'slow-consumer': 0,
    shutdown: 0,
    handover: 0,
    error: 0,
    'token-expired': 0,
  };
  /** Handshakes by outcome. */
  readonly handshakes: Record<HandshakeResult, number> = { accepted: 0, denied: 0, failed: 0 };
  /** Service calls and the seconds they took, in `SERVICE_BUCKETS` (cumulative at export). */
  readonly services = { count: 0, sum: 0, buckets: SERVICE_BUCKETS.map(() => 0) };
  private readonly serviceTimeObservers = new Set<(seconds: number) => void>();
  private readonly writeTimeObservers = new Set<(seconds: number) => void>();
  /** When the oldest publication not yet flushed reached this node's sessions (`performance.now()`), 0 if none. */
  private arrivedAt = 0;

  /** Records how long a service call took. */
  serviceTimed(seconds: number): void {
    for (const observe of this.serviceTimeObservers) observe(seconds);
    const s = this.services;
    s.count++;
    s.sum += seconds;
    const i = SERVICE_BUCKETS.findIndex((b) => seconds <= b);
    if (i >= 0) (s.buckets[i] as number)++;
  }

  /** Calls `observe` with each service call's duration (the metrics' histogram); returns the way to stop. */
  observeServiceTimes(observe: (seconds: number) => void): () => void {
    this.serviceTimeObservers.add(observe);
    return () => this.serviceTimeObservers.delete(observe);
  }

  /**
   * A publication from the engine reached sessions here: the first one since the last flush
   * starts the clock (one `performance.now()` per flush, not per publication).
   */
  publicationArrived(): void {
    if (this.arrivedAt === 0) this.arrivedAt = performance.now();
  }

  /**
   * The per-turn flush wrote what was queued: one observation, the wait of the oldest
   * publication in it, from its arrival here to the end of the socket writes.
   */
  flushed(): void {
    if (this.arrivedAt === 0) return;
    const seconds = (performance.now() - this.arrivedAt) / 1000;
    this.arrivedAt = 0;
    for (const observe of this.writeTimeObservers) observe(seconds);
  }

  /** Calls `observe` with each flush's publish-to-write time (the metrics' histogram); returns the way to stop. */
  observeWriteTimes(observe: (seconds: number) => void): () => void {
    this.writeTimeObservers.add(observe);
    return () => this.writeTimeObservers.delete(observe);
  }

  /** Counts a handshake's outcome. */
  handshakeDone(result: HandshakeResult): void {
    this.handshakes[result]++;
  }
}
