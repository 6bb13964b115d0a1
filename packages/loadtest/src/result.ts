/** The result of one run, as printed, written to --json and drawn in --html. */
import type { PartResult } from './context.js';
import { ExitCodes } from './errors.js';
import type { ServerSample } from './metrics.js';
import type { LoadtestOptions, Scenario } from './options.js';
import { type LatencySummary, mergeParts, mergeSeries, type SeriesPoint } from './stats.js';

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
    setupSeconds: number;
    connectsPerSecond: number;
    firstError?: string;
  };
  messages: {
    sent: number;
    expected: number;
    received: number;
    lost: number;
    duplicated: number;
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
  latency: LatencySummary;
  series: SeriesPoint[];
  /** From the server's /metrics when it has one. */
  server?: {
    cpuSeconds?: number;
    rssBytes?: number;
    heapUsedBytes?: number;
    rssPerSessionBytes?: number;
    heapPerSessionBytes?: number;
  };
  /** RSS of the generator's processes, added up. */
  generator: { rssBytes: number; workers: number };
  aborted?: string;
  exitCode: number;
}

export interface ResultInput {
  scenario: Scenario;
  options: LoadtestOptions;
  startedAt: Date;
  parts: PartResult[];
  samples: { before?: ServerSample; open?: ServerSample; close?: ServerSample };
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
    setupSeconds: round(setupSeconds, 3),
    connectsPerSecond: Math.round(connected / Math.max(setupSeconds, 0.001)),
    firstError: parts.find((p) => p.setup.firstError)?.setup.firstError,
  };
  const { latency, windowReceived, frames, ...messages } = totals;
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
    series: mergeSeries(parts.map((p) => p.stats.series)),
    // Memory per session means something only for idle sessions; under traffic it is noise.
    server: serverFigures(input.samples, input.scenario === 'connections' ? connected : 0),
    generator: { rssBytes: parts.reduce((n, p) => n + p.rssBytes, 0), workers: options.workers },
    aborted: parts.find((p) => p.aborted)?.aborted,
    exitCode: ExitCodes.OK,
  };
  if (input.scenario === 'feed') {
    result.updatesPerClientPerSecond = round(windowReceived / Math.max(1, connected) / windowSeconds, 2);
  }
  result.exitCode = exitCodeOf(result);
  return result;
}

/** Loss and latency decide the exit code; a run that lost nothing but sessions fails too. */
export function exitCodeOf(r: Pick<RunResult, 'messages' | 'sessions' | 'aborted'>): number {
  if (r.aborted) return ExitCodes.LATENCY;
  const m = r.messages;
  if (m.lost > 0 || m.duplicated > 0 || r.sessions.failed > 0 || r.sessions.lost > 0) return ExitCodes.LOSS;
  return ExitCodes.OK;
}

function serverFigures(samples: ResultInput['samples'], sessions: number): RunResult['server'] {
  const { before, open, close } = samples;
  if (!close && !open) return undefined;
  const end = close ?? open!;
  const cpu =
    open?.cpuSeconds !== undefined && close?.cpuSeconds !== undefined
      ? round(close.cpuSeconds - open.cpuSeconds, 3)
      : undefined;
  const perSession = (a?: number, b?: number) =>
    a !== undefined && b !== undefined && sessions > 0 ? Math.round((b - a) / sessions) : undefined;
  return {
    cpuSeconds: cpu,
    rssBytes: end.rssBytes,
    heapUsedBytes: end.heapUsedBytes,
    rssPerSessionBytes: perSession(before?.rssBytes, end.rssBytes),
    heapPerSessionBytes: perSession(before?.heapUsedBytes, end.heapUsedBytes),
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
