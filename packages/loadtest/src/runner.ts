/**
 * Runs a scenario: in this process with one worker, otherwise in worker processes that share
 * the clients and meet at barriers. Samples the server's /metrics around the measured window
 * and folds everything into one RunResult.
 */
import type { Slice } from './context.js';
import { driverFor, type Protocol } from './drivers.js';
import { readWindow, type WindowReading } from './idle.js';
import { fetchServerSample, metricsUrlFor, type ServerSample } from './metrics.js';
import { type LoadtestOptions, resolveOptions, type Scenario } from './options.js';
import { buildResult, type RunResult } from './result.js';
import { runPart } from './run-part.js';
import { processTreeSample } from './server-process.js';
import type { SeriesPoint } from './stats.js';
import { runWorkers } from './worker-pool.js';

export interface Progress {
  elapsedSeconds: number;
  connected: number;
  sent: number;
  received: number;
  deliveredPerSecond: number;
  p99: number;
}

export interface RunHooks {
  /** About once a second. */
  onProgress?: (progress: Progress) => void;
  /** When the measured window opens and closes (the bench reads server CPU there). */
  onWindow?: (event: 'open' | 'close') => void | Promise<void>;
  /** Wire protocol; the CLI always speaks Bayeux. */
  protocol?: Protocol;
}

export async function runScenario(
  scenario: Scenario,
  partial: Partial<LoadtestOptions>,
  hooks: RunHooks = {},
): Promise<RunResult> {
  const options = resolveOptions(partial);
  const sampleServer = serverSampler(options);
  const samples: { before?: ServerSample; open?: ServerSample; close?: ServerSample } = {};
  samples.before = await sampleServer();
  const startedAt = new Date();
  const pending: Promise<void>[] = [];
  // The generator's own CPU and the kernel's sockets at the edges of the window (connections).
  const readings: { before?: WindowReading; open?: WindowReading; close?: WindowReading } = {};
  if (scenario === 'connections') readings.before = readWindow();
  const onWindow = (event: 'open' | 'close') => {
    if (scenario === 'connections') readings[event] = readWindow();
    pending.push(
      (async () => {
        // The proportional set size once, at the end of the window (costly to read).
        samples[event] = await sampleServer(event === 'close');
        await hooks.onWindow?.(event);
      })(),
    );
  };
  const progress = progressAggregator(options.workers, hooks.onProgress);
  // The server over time for the report: one /metrics sample a second, none while one is pending.
  const timeline: { at: number; sample: ServerSample }[] = [];
  let sampling = false;
  const sampler =
    samples.before === undefined
      ? undefined
      : setInterval(() => {
          if (sampling) return;
          sampling = true;
          const at = Date.now() - startedAt.getTime();
          void sampleServer().then((sample) => {
            sampling = false;
            if (sample) timeline.push({ at, sample });
          });
        }, 1000);
  const protocol = hooks.protocol ?? (options.client === 'browser' ? 'bayeux-browser' : 'bayeux');
  let parts: Awaited<ReturnType<typeof runPart>>[];
  try {
    parts =
      options.workers === 1
        ? [
            await runPart(scenario, options, sliceOf(options, 0), driverFor(protocol, options.transport), {
              barrier: async () => {},
              onTick: (point, connected) => progress(0, point, connected),
              onWindow,
            }),
          ]
        : await runWorkers(
            scenario,
            options,
            protocol,
            Array.from({ length: options.workers }, (_, w) => sliceOf(options, w)),
            { onTick: progress, onWindow },
          );
  } finally {
    if (sampler) clearInterval(sampler);
  }
  await Promise.all(pending);
  return buildResult({ scenario, options, startedAt, parts, samples, timeline, readings });
}

/**
 * How the server is sampled: its /metrics, and with `--server-pid` its memory and CPU from
 * /proc over its whole process tree (the /metrics of a server with workers is one worker's).
 */
function serverSampler(options: LoadtestOptions): (pss?: boolean) => Promise<ServerSample | undefined> {
  const metricsUrl = metricsUrlFor(options.url, options.metricsUrl);
  const pid = options.serverPid;
  if (pid === 0) return () => fetchServerSample(metricsUrl);
  processTreeSample(pid); // a pid that is not there fails before the run, naming the flag
  return async (pss = false) => {
    const fromMetrics = await fetchServerSample(metricsUrl);
    let tree: ServerSample;
    try {
      tree = processTreeSample(pid, pss);
    } catch {
      return fromMetrics; // the server went away during the run: what /metrics still says
    }
    // The heap is per process: one worker's heap is no figure for the whole server.
    const heapUsedBytes = tree.processes === 1 ? fromMetrics?.heapUsedBytes : undefined;
    return { ...fromMetrics, ...tree, heapUsedBytes };
  };
}

function sliceOf(options: LoadtestOptions, worker: number): Slice {
  const per = Math.ceil(options.clients / options.workers);
  return {
    lo: Math.min(options.clients, worker * per),
    hi: Math.min(options.clients, (worker + 1) * per),
    worker,
    workers: options.workers,
  };
}

/** Adds up the workers' ticks into one progress line per second. */
function progressAggregator(workers: number, onProgress: RunHooks['onProgress']) {
  const latest: ({ point: SeriesPoint; connected: number } | undefined)[] = new Array(workers);
  let sent = 0;
  let received = 0;
  return (worker: number, point: SeriesPoint, connected: number) => {
    latest[worker] = { point, connected };
    sent += point.sentPerSecond;
    received += point.deliveredPerSecond;
    if (worker !== 0 || !onProgress) return;
    const ticks = latest.filter((l) => l !== undefined);
    onProgress({
      elapsedSeconds: point.t,
      connected: ticks.reduce((n, l) => n + l.connected, 0),
      sent,
      received,
      deliveredPerSecond: ticks.reduce((n, l) => n + l.point.deliveredPerSecond, 0),
      p99: Math.max(...ticks.map((l) => l.point.p99)),
    });
  };
}
