/**
 * What a scenario part runs with: its slice of the clients, the driver, the delivery
 * statistics, and the barriers that keep worker threads in step.
 */
import type { Driver, DriverFactory } from './driver.js';
import type { Slice } from './groups.js';
import type { LoadtestOptions } from './options.js';
import type { DemoFeedPart, DemoFeedTracker } from './scenarios/demo-feed.js';
import type { DeliveryStats, SeriesPoint, StatsPart } from './stats.js';

export { assignGroups, groupSizes, type Slice, seededRandom } from './groups.js';

export interface PartContext {
  options: Readonly<LoadtestOptions>;
  slice: Slice;
  driver: Driver;
  stats: DeliveryStats;
  /** Waits until every worker reached the same named point (immediate with one worker). */
  barrier: (name: string) => Promise<void>;
  /** Progress of this part, about once a second. */
  onTick: (point: SeriesPoint, connected: number) => void;
  /** Called when the measured window opens and closes (the bench samples server CPU there). */
  onWindow: (event: 'open' | 'close') => void;
  /** feed --source demo: the record accounting the driver reports to. */
  demo?: DemoFeedTracker;
}

export interface SetupResult {
  requested: number;
  connected: number;
  failed: number;
  /** Seconds the setup took. */
  seconds: number;
  firstError?: string;
  /** Why the ramp stopped before every session was opened (`--min-available`). */
  stopped?: string;
}

/** What one part (worker) returns. */
export interface PartResult {
  setup: SetupResult;
  stats: StatsPart;
  /** Seconds the measured window lasted. */
  windowSeconds: number;
  sessionsLost: number;
  /** Why sessions were lost, by reason (`socket closed 1006`, `connect refused: 402::…`). */
  lostReasons?: Record<string, number>;
  /** When sessions were lost (epoch ms), the first `LOST_AT_CAP` of this part. */
  lostAt?: number[];
  aborted?: string;
  /** connections: generator RSS at the end of the hold. */
  rssBytes: number;
  /** feed --source demo: snapshots, deltas and protocol checks. */
  demoFeed?: DemoFeedPart;
  /** connections --broadcast: this worker's sessions due the broadcast, and those it reached. */
  broadcast?: { expected: number; reached: number };
}

export type { DriverFactory };

/** How many loss times a part keeps (the count and reasons are kept whole). */
export const LOST_AT_CAP = 200;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Opens (and subscribes) the slice's clients with at most `concurrency` in flight, at most
 * `perSecond` started per second (0 = as fast as possible). `stop`, asked before each one,
 * ends the ramp early when it names a reason (the memory guard).
 */
export async function openClients(
  ctx: PartContext,
  prepare: (index: number) => Promise<void>,
  perSecond = 0,
  stop: () => string | undefined = () => undefined,
): Promise<SetupResult> {
  const { lo, hi } = ctx.slice;
  const started = performance.now();
  const result: SetupResult = { requested: hi - lo, connected: 0, failed: 0, seconds: 0 };
  let next = lo;
  const worker = async () => {
    while (next < hi) {
      const reason = stop();
      if (reason !== undefined) {
        result.stopped = reason;
        return;
      }
      const index = next++;
      if (perSecond > 0) {
        const due = started + ((index - lo) * 1000) / perSecond;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
      }
      try {
        await prepare(index);
        result.connected++;
      } catch (error) {
        result.failed++;
        result.firstError ??= (error as Error).message;
      }
    }
  };
  const lanes = Math.max(1, Math.min(ctx.options.concurrency, hi - lo));
  await Promise.all(Array.from({ length: lanes }, worker));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** Seconds of a payload padding string, built once per run. */
export function padding(size: number): string {
  return 'x'.repeat(size);
}

/** The part result once publishing and draining are over: the same shape for every scenario. */
export function partResult(
  ctx: PartContext,
  setup: SetupResult,
  window: { seconds: number; aborted?: string },
): PartResult {
  return {
    setup,
    stats: ctx.stats.toPart(),
    windowSeconds: window.seconds,
    sessionsLost: 0,
    aborted: window.aborted,
    rssBytes: process.memoryUsage().rss,
  };
}

/** Waits for late deliveries: until all expected arrived (one worker) or nothing moved for a while. */
export async function drain(ctx: PartContext): Promise<void> {
  const { stats, options } = ctx;
  const deadline = performance.now() + options.drain;
  let last = stats.received;
  let still = performance.now();
  while (performance.now() < deadline) {
    if (ctx.slice.workers === 1 && stats.received >= stats.expected) return;
    await sleep(50);
    if (stats.received !== last) {
      last = stats.received;
      still = performance.now();
    } else if (ctx.slice.workers > 1 && performance.now() - still > 1000) return;
  }
}
