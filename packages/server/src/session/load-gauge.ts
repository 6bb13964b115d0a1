/**
 * Whether this thread's event loop is saturated: its utilization
 * (`performance.eventLoopUtilization()`) since the previous reading, read at most once
 * per window and only when asked, so an idle server pays nothing.
 *
 * The flusher asks it before making a held long-poll wait for more messages: waiting
 * pays only when the loop is already the bottleneck (more messages then share one
 * response); below that it is latency and a timer for nothing.
 */
import { performance } from 'node:perf_hooks';

/** Utilization at or above which the loop counts as saturated. */
export const SATURATED = 0.9;
/** Shortest span between two readings, ms. */
export const WINDOW_MS = 100;

export class LoadGauge {
  private last = performance.eventLoopUtilization();
  private nextReading = 0;
  private saturated = false;

  constructor(
    private readonly threshold = SATURATED,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** True when the loop was busy at least `threshold` of the time since the last reading. */
  readonly busy = (): boolean => {
    const now = performance.now();
    if (now >= this.nextReading) {
      const current = performance.eventLoopUtilization();
      this.saturated = performance.eventLoopUtilization(current, this.last).utilization >= this.threshold;
      this.last = current;
      this.nextReading = now + this.windowMs;
    }
    return this.saturated;
  };
}
