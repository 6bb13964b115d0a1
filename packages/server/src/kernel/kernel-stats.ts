/** The kernel's counters: plain fields the hot paths bump, read by the facade's `stats()` and the metrics at scrape time. */
import type { RemovalReason } from '../types.js';

/** Upper bounds (seconds) of the service time histogram. */
export const SERVICE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] as const;

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
    error: 0,
    'token-expired': 0,
  };
  /** Handshakes by outcome. */
  readonly handshakes: Record<HandshakeResult, number> = { accepted: 0, denied: 0, failed: 0 };
  /** Service calls and the seconds they took, in `SERVICE_BUCKETS` (cumulative at export). */
  readonly services = { count: 0, sum: 0, buckets: SERVICE_BUCKETS.map(() => 0) };
  private readonly serviceTimeObservers = new Set<(seconds: number) => void>();

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

  /** Counts a handshake's outcome. */
  handshakeDone(result: HandshakeResult): void {
    this.handshakes[result]++;
  }
}
