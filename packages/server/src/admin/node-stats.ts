/**
 * One node's figures for the operator's console, answered to the `stats` control op: its
 * sessions and transports, memory, event-loop lag, cumulative message counters (the
 * console turns them into rates) and its busiest channels.
 *
 * Nothing here runs while no console watches: the lag monitor and the per-channel publish
 * counter start at the first `stats` request and stop `WATCH_MS` after the last one.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { BayouApp } from '../bayou-app.js';
import { BayouError } from '../errors.js';
import type { NodeOperations } from '../kernel/node-operations.js';
import type { LimiterStats } from '../limits/limiter.js';
import type { WebhookStats } from '../webhooks/webhook-sender.js';
import { isAdminChannel } from './admin-channels.js';

/** What the plugin knows and the kernel does not: its transports' and extensions' counters. */
export interface NodeSources {
  websockets(): number;
  /** Open HTTP streams by kind. */
  streams(): { streaming: number; eventsource: number };
  limits: Readonly<LimiterStats>;
  webhooks: Readonly<WebhookStats> | null;
}

export interface NodeStats {
  nodeId: string;
  at: number;
  sessions: number;
  websockets: number;
  /** Open `streaming` responses and EventSource streams. */
  streaming: number;
  eventSources: number;
  longPolls: number;
  rss: number;
  heapUsed: number;
  /** Event-loop delay since the last request beyond the monitor's period, ms. */
  lagMeanMs: number;
  lagMaxMs: number;
  publishes: number;
  delivered: number;
  slowConsumers: number;
  limitRefusals: number;
  engineErrors: number;
  /** Whether the engine can serve now (Redis reachable); always true in memory. */
  engineReady: boolean;
  /** Times the engine reconnected to Redis (0 in memory). */
  engineReconnects: number;
  webhookFailures: number;
  /** Channels by local subscribers, most first. */
  bySubscribers: [string, number][];
  /** Channels by publishes per second since the last request, most first. */
  byRate: [string, number][];
}

/** The lag monitor's sampling period, ms; each sample includes it, so it is taken off. */
const LAG_RESOLUTION_MS = 10;
const lagMs = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - LAG_RESOLUTION_MS);

/** The console stops watching a node this long after its last request. */
export const WATCH_MS = 5000;
/** Channels each list holds. */
export const TOP = 10;
/** Most channels counted between two requests: a flood of new names cannot grow the map. */
export const MAX_COUNTED = 10_000;

/** The Fastify decoration holding a node's counters for the console (not a public name). */
export const NODE_SOURCES = Symbol.for('bayou.node-sources');

/** The counters the Bayou plugin registered on `app` decorated it with; a clear error when there are none. */
export function sourcesOf(app: FastifyInstance): NodeSources {
  const sources = (app as unknown as Record<symbol, NodeSources | undefined>)[NODE_SOURCES];
  if (sources === undefined)
    throw new BayouError(
      'BAYOU_ERR_INVALID_OPTION',
      'register the Bayou plugin (app.register(bayou, …)) before the console',
    );
  return sources;
}

/** The TOP largest, most first, in one pass: no sort of every channel a node holds. */
function top(entries: Iterable<[string, number]>): [string, number][] {
  const best: [string, number][] = [];
  for (const entry of entries) {
    if (best.length === TOP && entry[1] <= (best[TOP - 1] as [string, number])[1]) continue;
    let i = best.length;
    while (i > 0 && (best[i - 1] as [string, number])[1] < entry[1]) i--;
    best.splice(i, 0, [entry[0], entry[1]]);
    if (best.length > TOP) best.pop();
  }
  return best;
}

export class NodeWatch {
  private lag: IntervalHistogram | null = null;
  private readonly counts = new Map<string, number>();
  private countedSince = 0;
  private stopTimer: NodeJS.Timeout | null = null;
  private watchedUntil = 0;

  /** Detaches the publish counter while watched. */
  private uncount: (() => void) | null = null;

  constructor(
    private readonly app: BayouApp,
    private readonly ops: NodeOperations,
    /** The plugin's counters (transports, limits, webhooks), read only when asked. */
    private readonly sources: NodeSources,
  ) {}

  get watching(): boolean {
    return this.lag !== null;
  }

  /** Channels counted now (for the bound's test). */
  get countedChannels(): number {
    return this.counts.size;
  }

  /** Answers a request, starting the watch if it was off. */
  read(): NodeStats {
    const now = Date.now();
    this.watchedUntil = now + WATCH_MS;
    if (this.lag === null) this.start(now);
    const k = this.ops;
    const s = this.app.stats();
    const src = this.sources;
    const lag = this.lag as IntervalHistogram;
    const mem = process.memoryUsage();
    const seconds = Math.max(0.001, (now - this.countedSince) / 1000);
    // The console's own feed is not the application's traffic.
    for (const channel of this.counts.keys()) if (isAdminChannel(channel)) this.counts.delete(channel);
    const byRate = top(this.counts).map(([c, n]): [string, number] => [
      c,
      Math.round((n / seconds) * 10) / 10,
    ]);
    this.counts.clear();
    this.countedSince = now;
    const streams = src.streams();
    const stats: NodeStats = {
      nodeId: k.nodeId,
      at: now,
      sessions: s.sessions,
      websockets: src.websockets(),
      streaming: streams.streaming,
      eventSources: streams.eventsource,
      longPolls: s.heldLongPolls,
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      lagMeanMs: lag.count > 0 ? lagMs(lag.mean) : 0,
      lagMaxMs: lag.count > 0 ? lagMs(lag.max) : 0,
      publishes: s.publishes,
      delivered: s.messagesOut,
      slowConsumers: s.slowConsumers,
      limitRefusals: src.limits.publishRefused + src.limits.sessionsRefused + src.limits.handshakesRefused,
      engineErrors: s.engineErrors,
      engineReady: k.engine.ready(),
      engineReconnects: k.engine.connectionStats?.().reconnects ?? 0,
      webhookFailures: src.webhooks ? src.webhooks.failed + src.webhooks.dropped : 0,
      bySubscribers: top(withoutAdmin(k.channelCounts())),
      byRate,
    };
    lag.reset();
    return stats;
  }

  stop(): void {
    if (this.stopTimer !== null) clearTimeout(this.stopTimer);
    this.stopTimer = null;
    this.lag?.disable();
    this.lag = null;
    this.counts.clear();
    this.uncount?.();
    this.uncount = null;
  }

  private start(now: number): void {
    this.lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
    this.lag.enable();
    this.countedSince = now;
    this.uncount = this.ops.taps.countPublishes((channel) => {
      const n = this.counts.get(channel);
      if (n !== undefined) this.counts.set(channel, n + 1);
      else if (this.counts.size < MAX_COUNTED) this.counts.set(channel, 1);
    });
    this.armStop();
  }

  /** One timer while watched: it stops the watch once requests stop coming. */
  private armStop(): void {
    this.stopTimer = setTimeout(
      () => {
        if (Date.now() >= this.watchedUntil) this.stop();
        else this.armStop();
      },
      Math.max(10, this.watchedUntil - Date.now()),
    );
    this.stopTimer.unref();
  }
}

function* withoutAdmin(counts: Iterable<[string, number]>): Iterable<[string, number]> {
  for (const entry of counts) if (!isAdminChannel(entry[0])) yield entry;
}
