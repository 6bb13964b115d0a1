/** The result of one run, as printed, written to --json and drawn in --html. */
import type { PartResult } from './context.js';
import { ExitCodes } from './errors.js';
import { type BroadcastFigures, type IdleFigures, idleFigures, type WindowReading } from './idle.js';
import type { ServerSample } from './metrics.js';
import type { FeedSource, LoadtestOptions, Scenario } from './options.js';
import type { DemoFeedPart } from './scenarios/demo-feed.js';
import {
  type LatencySummary,
  mergeParts,
  mergeSeries,
  type PercentilePoint,
  type SeriesPoint,
} from './stats.js';

export interface RunResult {
  scenario: Scenario;
  options: LoadtestOptions;
  startedAt: string;
  sessions: {
    requested: number;
    connected: number;
    failed: number;
    /** Sessions that ended during the run (socket closed, refused connect). */
    lost: number;
    /** Why, by reason, summed over the workers. */
    lostReasons?: Record<string, number>;
    /**
     * When sessions were lost, in seconds since the run started (sorted; at most
     * `LOST_AT_CAP` per worker): tells a loss in the ramp from one in the hold or the broadcast.
     */
    lostAtSeconds?: number[];
    setupSeconds: number;
    connectsPerSecond: number;
    firstError?: string;
    /** connections: why the ramp stopped early (`--min-available`). */
    rampStopped?: string;
  };
  messages: {
    sent: number;
    /** null when the server produces the messages (feed --source demo): not countable. */
    expected: number | null;
    received: number;
    lost: number | null;
    duplicated: number | null;
  };
  /** Deliveries per second inside the measured window. */
  deliveredPerSecond: number;
  /** Deliveries counted inside the measured window. */
  deliveredInWindow: number;
  /** Deliveries per WebSocket frame or long-poll response that carried any (batching). */
  deliveriesPerFrame: number;
  windowSeconds: number;
  /** feed: deliveries per client per second. */
  updatesPerClientPerSecond?: number;
  /** feed: where the updates came from and, for the demo feed, the record checks. */
  feed?: FeedSummary;
  latency: LatencySummary;
  /** The latency distribution from the merged HDR histogram (empty without samples). */
  latencyDistribution: PercentilePoint[];
  series: SeriesPoint[];
  /** The server over time, sampled from its /metrics once a second (empty without /metrics). */
  serverSeries: ServerPoint[];
  /** From the server's /metrics when it has one. */
  server?: {
    cpuSeconds?: number;
    rssBytes?: number;
    heapUsedBytes?: number;
    rssPerSessionBytes?: number;
    heapPerSessionBytes?: number;
    /** Processes whose memory and CPU were added up from /proc (`--server-pid`). */
    processes?: number;
    /** What the per-session figures cover when it is not simply every session on one process. */
    memoryScope?: string;
  };
  /** RSS of the generator's processes, added up. */
  generator: { rssBytes: number; workers: number };
  /** connections: the held window's CPU (server and generator apart) and kernel socket memory. */
  idle?: IdleFigures;
  /** connections --broadcast: one publish per channel, how long it took to reach every session. */
  broadcast?: BroadcastFigures;
  aborted?: string;
  exitCode: number;
}

export interface ServerPoint {
  /** Seconds since the run started. */
  t: number;
  /** CPU used since the previous sample, in % of one core (undefined for the first sample). */
  cpuPercent?: number;
  rssBytes?: number;
  heapUsedBytes?: number;
}

export interface FeedSummary {
  source: FeedSource;
  /** Connected (demo: subscribed) clients × subjects per client. */
  subscriptions: number;
  /** Updates received per second in the measured window, in all. */
  updatesPerSecond: number;
  updatesPerClientPerSecond: number;
  updatesPerSubscriptionPerSecond: number;
  /** demo: subscriptions × --rate (the server's --demo-rate), when --rate is given. */
  nominalUpdatesPerSecond?: number;
  /** false for the demo feed: the server produces the updates, so loss is not counted. */
  lossCounted: boolean;
  /** demo: one snapshot per subscription expected. */
  snapshots?: { expected: number; received: number; missing: number; duplicated: number };
  /** demo: deltas received (the whole run, window or not). */
  deltas?: number;
  /** demo: deltas before their subscription's snapshot (a protocol error). */
  deltasBeforeSnapshot?: number;
  /** demo: messages on subjects the client had not subscribed to. */
  unexpected?: number;
  /** demo: deltas without a numeric `time` field (no latency for them). */
  untimed?: number;
}

export interface ResultInput {
  scenario: Scenario;
  options: LoadtestOptions;
  startedAt: Date;
  parts: PartResult[];
  samples: { before?: ServerSample; open?: ServerSample; close?: ServerSample };
  /** /metrics samples taken once a second during the run, with their time (ms since the start). */
  timeline?: { at: number; sample: ServerSample }[];
  /** connections: the generator and the kernel read at the window's edges. */
  readings?: { before?: WindowReading; open?: WindowReading; close?: WindowReading };
}

export function buildResult(input: ResultInput): RunResult {
  const { parts, options } = input;
  const totals = mergeParts(parts.map((p) => p.stats));
  const setupSeconds = Math.max(...parts.map((p) => p.setup.seconds));
  const connected = parts.reduce((n, p) => n + p.setup.connected, 0);
  const windowSeconds = Math.max(...parts.map((p) => p.windowSeconds));
  const sessions = {
    requested: parts.reduce((n, p) => n + p.setup.requested, 0),
    connected,
    failed: parts.reduce((n, p) => n + p.setup.failed, 0),
    lost: parts.reduce((n, p) => n + p.sessionsLost, 0),
    lostReasons: sumReasons(parts),
    lostAtSeconds: lossTimes(parts, input.startedAt.getTime()),
    setupSeconds: round(setupSeconds, 3),
    connectsPerSecond: Math.round(connected / Math.max(setupSeconds, 0.001)),
    firstError: parts.find((p) => p.setup.firstError)?.setup.firstError,
    rampStopped: parts.find((p) => p.setup.stopped)?.setup.stopped,
  };
  const { latency, latencyDistribution, windowReceived, frames, ...messages } = totals;
  const result: RunResult = {
    scenario: input.scenario,
    options,
    startedAt: input.startedAt.toISOString(),
    sessions,
    messages,
    deliveredPerSecond: Math.round(windowReceived / windowSeconds),
    deliveredInWindow: windowReceived,
    deliveriesPerFrame: frames > 0 ? round(messages.received / frames, 2) : 0,
    windowSeconds: round(windowSeconds, 3),
    latency,
    latencyDistribution,
    series: mergeSeries(parts.map((p) => p.stats.series)),
    serverSeries: serverSeries(input.timeline ?? []),
    // Memory per session means something only for idle sessions; under traffic it is noise.
    server: serverFigures(input.samples, input.scenario === 'connections' ? connected : 0),
    generator: { rssBytes: parts.reduce((n, p) => n + p.rssBytes, 0), workers: options.workers },
    aborted: parts.find((p) => p.aborted)?.aborted,
    exitCode: ExitCodes.OK,
  };
  if (input.scenario === 'connections') connectionsFigures(result, input, connected);
  if (input.scenario === 'feed') {
    result.updatesPerClientPerSecond = round(windowReceived / Math.max(1, connected) / windowSeconds, 2);
    result.feed = feedSummary(options, parts, connected, windowReceived, windowSeconds);
    if (options.source === 'demo') {
      // Nobody here knows how many updates the server produced: say so rather than "lost 0".
      result.messages = { ...result.messages, expected: null, lost: null, duplicated: null };
    }
  }
  result.exitCode = exitCodeOf(result);
  return result;
}

/**
 * Loss and latency decide the exit code; a run that lost nothing but sessions fails too. For
 * the demo feed, a missing or repeated snapshot, a delta before its snapshot or a message on
 * a subject nobody asked for count as loss.
 */
export function exitCodeOf(r: Pick<RunResult, 'messages' | 'sessions' | 'aborted' | 'feed'>): number {
  if (r.aborted) return ExitCodes.LATENCY;
  const m = r.messages;
  const s = r.sessions;
  if ((m.lost ?? 0) > 0 || (m.duplicated ?? 0) > 0 || s.failed > 0 || s.lost > 0 || s.rampStopped) {
    return ExitCodes.LOSS;
  }
  const f = r.feed;
  if (
    f?.snapshots &&
    f.snapshots.missing + f.snapshots.duplicated + (f.deltasBeforeSnapshot ?? 0) + (f.unexpected ?? 0) > 0
  ) {
    return ExitCodes.LOSS;
  }
  return ExitCodes.OK;
}

function feedSummary(
  options: LoadtestOptions,
  parts: readonly PartResult[],
  connected: number,
  windowReceived: number,
  windowSeconds: number,
): FeedSummary {
  const demo = parts.map((p) => p.demoFeed).filter((d): d is DemoFeedPart => d !== undefined);
  const sum = (key: keyof DemoFeedPart) => demo.reduce((n, d) => n + d[key], 0);
  const subscriptions =
    options.source === 'demo' ? sum('subscriptions') : connected * options.subjectsPerClient;
  const perSecond = windowReceived / windowSeconds;
  const summary: FeedSummary = {
    source: options.source,
    subscriptions,
    updatesPerSecond: Math.round(perSecond),
    updatesPerClientPerSecond: round(perSecond / Math.max(1, connected), 2),
    updatesPerSubscriptionPerSecond: round(perSecond / Math.max(1, subscriptions), 3),
    lossCounted: options.source !== 'demo',
  };
  if (options.source !== 'demo') return summary;
  if (options.rate > 0) summary.nominalUpdatesPerSecond = subscriptions * options.rate;
  summary.snapshots = {
    expected: subscriptions,
    received: sum('snapshots'),
    missing: sum('missingSnapshots'),
    duplicated: sum('duplicateSnapshots'),
  };
  summary.deltas = sum('deltas');
  summary.deltasBeforeSnapshot = sum('deltasBeforeSnapshot');
  summary.unexpected = sum('unexpected');
  summary.untimed = sum('untimed');
  return summary;
}

/** CPU as % of one core between successive samples, and memory as sampled. */
export function serverSeries(timeline: readonly { at: number; sample: ServerSample }[]): ServerPoint[] {
  return timeline.map(({ at, sample }, i) => {
    const point: ServerPoint = { t: round(at / 1000, 1) };
    const prev = timeline[i - 1];
    if (prev?.sample.cpuSeconds !== undefined && sample.cpuSeconds !== undefined && at > prev.at) {
      point.cpuPercent = round(((sample.cpuSeconds - prev.sample.cpuSeconds) * 100_000) / (at - prev.at), 1);
    }
    if (sample.rssBytes !== undefined) point.rssBytes = sample.rssBytes;
    if (sample.heapUsedBytes !== undefined) point.heapUsedBytes = sample.heapUsedBytes;
    return point;
  });
}

export function serverFigures(samples: ResultInput['samples'], sessions: number): RunResult['server'] {
  const { before, open, close } = samples;
  if (!close && !open) return undefined;
  const end = close ?? open!;
  const cpu =
    open?.cpuSeconds !== undefined && close?.cpuSeconds !== undefined
      ? round(close.cpuSeconds - open.cpuSeconds, 3)
      : undefined;
  const scope = memoryScope(before, end, sessions);
  // A negative growth is two different processes' figures, or a GC: no per-session figure.
  const perSession = (a?: number, b?: number) =>
    a !== undefined && b !== undefined && scope !== undefined && b >= a
      ? Math.round((b - a) / scope.sessions)
      : undefined;
  const figures: NonNullable<RunResult['server']> = {
    cpuSeconds: cpu,
    rssBytes: end.rssBytes,
    heapUsedBytes: end.heapUsedBytes,
    rssPerSessionBytes: perSession(before?.rssBytes, end.rssBytes),
    heapPerSessionBytes: perSession(before?.heapUsedBytes, end.heapUsedBytes),
  };
  if (end.processes !== undefined) figures.processes = end.processes;
  if (scope?.note !== undefined) figures.memoryScope = scope.note;
  return figures;
}

/**
 * The sessions that the memory growth between `before` and `end` is to be divided by.
 * Figures summed over the server's processes (`--server-pid`) hold every session. A Bayou
 * /metrics is one process's: with `--workers` that is one worker holding a share of the
 * sessions, which it reports itself (`bayou_sessions`), so its growth is divided by its own
 * share. Another server's /metrics is taken to be the whole server, as before.
 */
export function memoryScope(
  before: ServerSample | undefined,
  end: ServerSample,
  sessions: number,
): { sessions: number; note?: string } | undefined {
  if (sessions <= 0) return undefined;
  if (end.processes !== undefined) return { sessions, note: `${end.processes} processes, from /proc` };
  if (end.sessions === undefined) return { sessions };
  const own = end.sessions - (before?.sessions ?? 0);
  if (own <= 0) return undefined;
  if (own >= sessions) return { sessions };
  return {
    sessions: own,
    note: `one server process: ${own} of ${sessions} sessions (--server-pid for all)`,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** connections: the held window's figures and the broadcast's, when there was one. */
function connectionsFigures(result: RunResult, input: ResultInput, connected: number): void {
  const { before, open, close } = input.readings ?? {};
  if (before && open && close) {
    result.idle = idleFigures(before, open, close, connected, {
      open: input.samples.open?.cpuSeconds,
      close: input.samples.close?.cpuSeconds,
      rssBytes: input.samples.close?.processes !== undefined ? input.samples.close.rssBytes : undefined,
      pssBytes: input.samples.close?.pssBytes,
    });
  }
  const parts = input.parts.map((p) => p.broadcast).filter((b) => b !== undefined);
  if (parts.length === 0) return;
  result.broadcast = {
    channels: Math.max(1, input.options.channels),
    expected: parts.reduce((n, b) => n + b.expected, 0),
    reached: parts.reduce((n, b) => n + b.reached, 0),
    ms: result.latency.max,
  };
}

/** The workers' lost-session reasons added up (absent when none was lost). */
function lossTimes(parts: readonly PartResult[], start: number): number[] | undefined {
  const at = parts.flatMap((p) => p.lostAt ?? []).sort((a, b) => a - b);
  return at.length === 0 ? undefined : at.map((t) => round((t - start) / 1000, 1));
}

function sumReasons(parts: readonly PartResult[]): Record<string, number> | undefined {
  const sum: Record<string, number> = {};
  for (const p of parts) for (const [k, n] of Object.entries(p.lostReasons ?? {})) sum[k] = (sum[k] ?? 0) + n;
  return Object.keys(sum).length > 0 ? sum : undefined;
}
