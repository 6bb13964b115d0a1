/**
 * Delivery accounting and latency statistics. Every published message has an id; the
 * publisher records how many deliveries it expects, receivers count what arrives, so loss
 * and duplicates are exact per message. Latencies go to HDR histograms in microseconds.
 */
import hdr from 'hdr-histogram-js';

type Histogram = ReturnType<typeof hdr.build>;

/** Wall-clock milliseconds with sub-millisecond precision, comparable across worker threads. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export interface LatencySummary {
  count: number;
  /** All in milliseconds. */
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface SeriesPoint {
  /** Seconds since the run started. */
  t: number;
  sentPerSecond: number;
  deliveredPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Sessions open at that moment. */
  connected: number;
}

/** One point of the latency distribution: `percentile` % of the deliveries took at most `ms`. */
export interface PercentilePoint {
  percentile: number;
  ms: number;
}

/** What one worker hands back to be merged. */
export interface StatsPart {
  sent: number;
  frames: number;
  received: number;
  windowReceived: number;
  expectedById: Uint16Array;
  receivedById: Uint16Array;
  histogram: string;
  series: SeriesPoint[];
}

/** The histograms' highest trackable latency: one hour, in µs. */
const MAX_LATENCY_US = 3_600_000_000;

export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: MAX_LATENCY_US,
    numberOfSignificantValueDigits: 3,
  });
}

export function summarize(h: Histogram): LatencySummary {
  const ms = (us: number) => Math.round(us) / 1000;
  if (h.totalCount === 0) return { count: 0, min: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  return {
    count: h.totalCount,
    min: ms(h.minNonZeroValue),
    mean: ms(h.mean),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
  };
}

/**
 * The latency distribution of a histogram, for the report's percentile chart: points spaced
 * evenly in "nines" (50%, 90%, 99%, 99.9%, … tenths of a nine apart) up to what the sample
 * count can resolve, then the maximum.
 */
export function percentileDistribution(h: Histogram): PercentilePoint[] {
  if (h.totalCount === 0) return [];
  const out: PercentilePoint[] = [];
  const ms = (us: number) => Math.round(us) / 1000;
  for (let nines = 0; nines <= 6; nines += 0.1) {
    const tail = 10 ** -nines;
    if (tail * h.totalCount < 1) break;
    const percentile = Math.round((1 - tail) * 100 * 1e6) / 1e6;
    out.push({ percentile, ms: ms(h.getValueAtPercentile(percentile)) });
  }
  out.push({ percentile: 100, ms: ms(h.maxValue) });
  return out;
}

function grow(a: Uint16Array, need: number): Uint16Array {
  if (need < a.length) return a;
  const b = new Uint16Array(Math.max(need + 1, a.length * 2));
  b.set(a);
  return b;
}

export class DeliveryStats {
  sent = 0;
  /** Deliveries expected for the messages sent so far. */
  expected = 0;
  received = 0;
  /** Deliveries received while the measured window was open. */
  windowReceived = 0;
  /** WebSocket frames or HTTP responses that carried at least one delivery. */
  frames = 0;
  /** Latency limit in µs (0 = none) and whether it was passed. */
  maxLatencyUs = 0;
  latencyExceeded = false;
  readonly histogram: Histogram = newHistogram();
  readonly series: SeriesPoint[] = [];
  private expectedById: Uint16Array = new Uint16Array(1024);
  private receivedById: Uint16Array = new Uint16Array(1024);
  private interval: Histogram = newHistogram();
  private windowStart = Number.POSITIVE_INFINITY;
  private windowOpen = false;
  private lastTick: { at: number; sent: number; received: number };
  private readonly startedAt: number;

  constructor(startedAt = now()) {
    this.startedAt = startedAt;
    this.lastTick = { at: startedAt, sent: 0, received: 0 };
  }

  /** Starts the measured window: later sends count for latency, later deliveries for throughput. */
  openWindow(at = now()): void {
    this.windowStart = at;
    this.windowOpen = true;
  }

  closeWindow(): void {
    this.windowOpen = false;
  }

  onSend(id: number, expectedDeliveries: number): void {
    this.sent++;
    this.expected += expectedDeliveries;
    this.expectedById = grow(this.expectedById, id);
    this.expectedById[id] = expectedDeliveries;
  }

  /** One delivery of message `id`, sent (or due to be sent) at `sentAt` ms. */
  onDeliver(id: number, sentAt: number, at: number): void {
    this.received++;
    this.receivedById = grow(this.receivedById, id);
    this.receivedById[id]!++;
    if (this.windowOpen) this.windowReceived++;
    if (sentAt < this.windowStart) return;
    const us = Math.max(1, Math.round((at - sentAt) * 1000));
    this.histogram.recordValue(us);
    this.interval.recordValue(us);
    if (this.maxLatencyUs > 0 && us > this.maxLatencyUs) this.latencyExceeded = true;
  }

  /** feed --source demo: a record snapshot arrived (counted as received; it is not an update). */
  onSnapshot(): void {
    this.received++;
  }

  /**
   * feed --source demo: a server-produced update stamped `time` (the server's `Date.now()`)
   * received at `at` (this process's `Date.now()`, the same clock on one machine). The
   * stamp has millisecond resolution, so latencies are whole milliseconds (0 is recorded
   * as 1 µs). `time` undefined: counted, without a latency.
   */
  onUpdate(time: number | undefined, at: number): void {
    this.received++;
    if (this.windowOpen) this.windowReceived++;
    if (time === undefined || time < this.windowStart) return;
    // Clamped into the histogram's range: a bogus stamp must not stop the run.
    const us = Math.min(MAX_LATENCY_US, Math.max(1, Math.round(at - time) * 1000));
    this.histogram.recordValue(us);
    this.interval.recordValue(us);
    if (this.maxLatencyUs > 0 && us > this.maxLatencyUs) this.latencyExceeded = true;
  }

  /** Closes one point of the time series (called about once a second). */
  tick(at = now()): SeriesPoint {
    const dt = Math.max(1e-3, (at - this.lastTick.at) / 1000);
    const s = summarize(this.interval);
    const point: SeriesPoint = {
      t: Math.round((at - this.startedAt) / 100) / 10,
      sentPerSecond: Math.round((this.sent - this.lastTick.sent) / dt),
      deliveredPerSecond: Math.round((this.received - this.lastTick.received) / dt),
      p50: s.p50,
      p90: s.p90,
      p99: s.p99,
      max: s.max,
      connected: 0,
    };
    this.series.push(point);
    this.interval.reset();
    this.lastTick = { at, sent: this.sent, received: this.received };
    return point;
  }

  toPart(): StatsPart {
    return {
      sent: this.sent,
      frames: this.frames,
      received: this.received,
      windowReceived: this.windowReceived,
      expectedById: this.expectedById,
      receivedById: this.receivedById,
      histogram: hdr.encodeIntoCompressedBase64(this.histogram),
      series: this.series,
    };
  }
}

export interface DeliveryTotals {
  sent: number;
  /** Frames (or long-poll responses) that carried deliveries. */
  frames: number;
  expected: number;
  received: number;
  lost: number;
  duplicated: number;
  windowReceived: number;
  latency: LatencySummary;
  latencyDistribution: PercentilePoint[];
}

/** Merges the parts of every worker: per-message counts add up, histograms add up. */
export function mergeParts(parts: readonly StatsPart[]): DeliveryTotals {
  const len = Math.max(0, ...parts.map((p) => Math.max(p.expectedById.length, p.receivedById.length)));
  const exp = new Uint32Array(len);
  const rec = new Uint32Array(len);
  const h = newHistogram();
  for (const p of parts) {
    p.expectedById.forEach((v, i) => {
      exp[i]! += v;
    });
    p.receivedById.forEach((v, i) => {
      rec[i]! += v;
    });
    h.add(hdr.decodeFromCompressedBase64(p.histogram));
  }
  let expected = 0;
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < len; i++) {
    expected += exp[i]!;
    if (rec[i]! < exp[i]!) lost += exp[i]! - rec[i]!;
    else duplicated += rec[i]! - exp[i]!;
  }
  return {
    sent: parts.reduce((n, p) => n + p.sent, 0),
    frames: parts.reduce((n, p) => n + p.frames, 0),
    expected,
    received: parts.reduce((n, p) => n + p.received, 0),
    lost,
    duplicated,
    windowReceived: parts.reduce((n, p) => n + p.windowReceived, 0),
    latency: summarize(h),
    latencyDistribution: percentileDistribution(h),
  };
}

/** Adds the time series of several workers point by point (latencies: the worst worker). */
export function mergeSeries(all: readonly SeriesPoint[][]): SeriesPoint[] {
  if (all.length === 1) return all[0]!;
  const len = Math.max(0, ...all.map((s) => s.length));
  const out: SeriesPoint[] = [];
  for (let i = 0; i < len; i++) {
    const pts = all.map((s) => s[i]).filter((p): p is SeriesPoint => p !== undefined);
    out.push({
      t: pts[0]!.t,
      sentPerSecond: pts.reduce((n, p) => n + p.sentPerSecond, 0),
      deliveredPerSecond: pts.reduce((n, p) => n + p.deliveredPerSecond, 0),
      p50: Math.max(...pts.map((p) => p.p50)),
      p90: Math.max(...pts.map((p) => p.p90)),
      p99: Math.max(...pts.map((p) => p.p99)),
      max: Math.max(...pts.map((p) => p.max)),
      connected: pts.reduce((n, p) => n + p.connected, 0),
    });
  }
  return out;
}

/** The middle of the finite values (the mean of the middle two for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** How far rounds of a bench disagree: ± half the range of the finite values, in percent of their median (0 for fewer than two). */
export function spread(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x));
  const m = median(v);
  if (v.length < 2 || !m) return 0;
  return ((Math.max(...v) - Math.min(...v)) / 2 / m) * 100;
}

/** One metric of a bench row over its rounds: the median, the spread (± % of it) and every round's value. */
export interface RoundsMetric {
  median: number;
  spread: number;
  values: number[];
}

/** A bench's figures per row (`bayou/websocket`) and metric (`cpuUsPerMsg`). */
export type RoundsSummary = Record<string, Record<string, RoundsMetric>>;

/**
 * Medians and spreads over rounds, per row and per numeric metric (the metrics of a row's
 * first round; values that are not numbers are left out).
 */
export function summarizeRounds(results: Readonly<Record<string, readonly object[]>>): RoundsSummary {
  const summary: RoundsSummary = {};
  for (const [key, runs] of Object.entries(results)) {
    const row: Record<string, RoundsMetric> = {};
    for (const metric of Object.keys(runs[0] ?? {})) {
      const values = runs
        .map((r) => (r as Record<string, unknown>)[metric])
        .filter((v): v is number => typeof v === 'number');
      row[metric] = { median: median(values), spread: spread(values), values };
    }
    summary[key] = row;
  }
  return summary;
}

/** The `q` quantile (0–1) of ascending `sorted` values, nearest rank; 0 when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
