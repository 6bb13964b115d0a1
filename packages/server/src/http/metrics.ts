/**
 * Prometheus metrics: prom-client's process and Node metrics plus Bayou's own, read from
 * plain counters at scrape time so the hot path never touches a metric object.
 */
import { readFileSync } from 'node:fs';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { BayouApp } from '../bayou-app.js';
import type { Engine, HistoryStats } from '../engine/engine.js';
import { type KernelStats, SERVICE_BUCKETS, WRITE_BUCKETS } from '../kernel/kernel-stats.js';
import type { LimiterStats } from '../limits/limiter.js';
import type { RemovalReason } from '../types.js';
import { type HookStats, hookMetrics } from './hook-metrics.js';
import { totalCounter } from './metric-helpers.js';

export interface ConnectionCounts {
  websocket(): number;
  /** Open streaming responses by type (`streaming`, `eventsource`). */
  streams(): { streaming: number; eventsource: number };
}

/** Counters of the security extensions, read at scrape time. */
export interface SecurityCounts {
  limits: Readonly<LimiterStats>;
  /** IPs the limiter currently tracks. */
  trackedIps(): number;
  /** The auth extension's counters, when it runs. */
  auth: Readonly<{
    refreshed: number;
    refreshRefused: number;
    expired: number;
    browserMismatch: number;
  }> | null;
  /** The connection guard's and the WebSocket handshake deadline's counters. */
  connections?: {
    open(): number;
    refused(): number;
    silentClosed(): number;
    handshakeTimeouts(): number;
    /** WebSockets on the heartbeat wheel, and those it closed for answering nothing. */
    heartbeatSockets(): number;
    heartbeatTimeouts(): number;
  };
}

/** The version in this package's package.json, read once. */
const SERVER_VERSION: string = (() => {
  try {
    const url = new URL('../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();

/**
 * Registers Bayou's metrics on `shared` (the host application's registry, which collects
 * the process metrics itself) or on a registry of its own with the process metrics.
 */
/** What an engine with counters (the Redis engine) reports. */
interface EngineWithStats {
  readonly stats: { readonly errors: number; readonly reconnects: number; readonly probeFailures?: number };
}

function hasStats(engine: Engine | undefined): engine is Engine & EngineWithStats {
  const stats = (engine as Partial<EngineWithStats> | undefined)?.stats;
  return typeof stats?.errors === 'number' && typeof stats.reconnects === 'number';
}

/** ms between the event-loop lag samples of `nodejs_eventloop_lag_*` (prom-client's default: 10). */
export const LAG_SAMPLE_MS = 100;

export function createMetrics(
  bayou: BayouApp,
  /** The node's timings: service calls, publish-to-write (`KernelStats`). */
  timings: Pick<KernelStats, 'observeServiceTimes' | 'observeWriteTimes'>,
  connections: ConnectionCounts,
  security: SecurityCounts,
  shared?: Registry,
  engine?: Engine,
  hooks: HookStats = {},
): Registry {
  const registry = shared ?? new Registry();
  // The event-loop lag histogram samples every 100 ms, not prom-client's default 10 ms: its
  // timer was the idle process's main cost (100 wake-ups a second, about 4 ms of CPU a
  // second with nothing to do); a stalled loop delays the sample all the same.
  if (shared === undefined)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LAG_SAMPLE_MS });
  securityMetrics(registry, security);
  const stat = trafficMetrics(registry, bayou, connections);
  const serviceTime = new Histogram({
    name: 'bayou_service_seconds',
    help: 'Time a /service handler took to answer',
    buckets: [...SERVICE_BUCKETS],
    registers: [registry],
  });
  timings.observeServiceTimes((seconds) => serviceTime.observe(seconds));
  const writeTime = new Histogram({
    name: 'bayou_publish_to_write_seconds',
    help: 'Per flush: from the oldest publication in it reaching this node (the publish itself on the memory engine, its arrival from Redis on Redis) to the socket writes',
    buckets: [...WRITE_BUCKETS],
    registers: [registry],
  });
  timings.observeWriteTimes((seconds) => writeTime.observe(seconds));
  new Gauge({
    name: 'bayou_build_info',
    help: 'Bayou build: version of @bayou/server and of Node.js (value is always 1)',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: SERVER_VERSION, node: process.version }, 1);
  engineMetrics(registry, stat, engine);
  hookMetrics(registry, hooks);
  return registry;
}

/** The limits' refusals, the connection guard's counts and the auth extension's. */
function securityMetrics(registry: Registry, security: SecurityCounts): void {
  const refusals: [string, () => number][] = [
    ['publish', () => security.limits.publishRefused],
    ['sessions', () => security.limits.sessionsRefused],
    ['handshakes', () => security.limits.handshakesRefused],
  ];
  const refusalsReported = new Map<string, number>();
  new Counter({
    name: 'bayou_limit_refusals_total',
    help: 'Messages refused by a limit (publish rate, sessions per IP, handshakes per IP)',
    labelNames: ['limit'],
    registers: [registry],
    collect() {
      for (const [limit, read] of refusals) {
        const now = read();
        const before = refusalsReported.get(limit) ?? 0;
        // Touch every label so a zero count is reported too.
        this.inc({ limit }, Math.max(0, now - before));
        refusalsReported.set(limit, now);
      }
    },
  });
  new Gauge({
    name: 'bayou_limit_tracked_ips',
    help: 'Client IPs the per-IP limits currently track',
    registers: [registry],
    collect() {
      this.set(security.trackedIps());
    },
  });
  if (security.connections !== undefined) connectionMetrics(registry, security.connections);
  const auth = security.auth;
  if (auth !== null) {
    totalCounter(
      registry,
      'bayou_token_refreshes_total',
      'Tokens refreshed by a /meta/connect',
      () => auth.refreshed,
    );
    totalCounter(
      registry,
      'bayou_token_refresh_refusals_total',
      'Token refreshes refused (bad, expired or another sub)',
      () => auth.refreshRefused,
    );
    totalCounter(
      registry,
      'bayou_token_expiries_total',
      'Sessions ended because their token expired',
      () => auth.expired,
    );
    totalCounter(
      registry,
      'bayou_browser_mismatches_total',
      "Long-polls refused for lacking their session's BAYEUX_BROWSER cookie",
      () => auth.browserMismatch,
    );
  }
}

/** The connection guard's, the WebSocket handshake deadline's and the heartbeat's counts. */
function connectionMetrics(registry: Registry, conn: NonNullable<SecurityCounts['connections']>): void {
  new Gauge({
    name: 'bayou_connections_open',
    help: 'Connections (sockets) this process holds open, counted against maxConnections',
    registers: [registry],
    collect() {
      this.set(conn.open());
    },
  });
  totalCounter(
    registry,
    'bayou_connections_refused_total',
    'Connections refused: answered 503 past maxConnections, or closed at accept past maxConnectionsPerIp',
    conn.refused,
  );
  totalCounter(
    registry,
    'bayou_connections_timed_out_total',
    'Connections closed after handshakeTimeout: silent ones, and WebSockets without a Bayeux handshake',
    () => conn.silentClosed() + conn.handshakeTimeouts(),
  );
  new Gauge({
    name: 'bayou_heartbeat_sockets',
    help: 'WebSockets of heartbeat sessions, pinged once per heartbeatInterval',
    registers: [registry],
    collect() {
      this.set(conn.heartbeatSockets());
    },
  });
  totalCounter(
    registry,
    'bayou_heartbeat_timeouts_total',
    'WebSockets of heartbeat sessions closed for sending nothing back between two pings',
    conn.heartbeatTimeouts,
  );
}

/**
 * Sessions, connections and message counts, read from one `stats()` snapshot per scrape;
 * returns the reader of that snapshot for the other counters.
 */
function trafficMetrics(
  registry: Registry,
  bayou: BayouApp,
  connections: ConnectionCounts,
): (read: (s: ReturnType<BayouApp['stats']>) => number) => () => number {
  new Gauge({
    name: 'bayou_sessions',
    help: 'Bayeux sessions on this node',
    registers: [registry],
    collect() {
      this.set(bayou.sessionCount);
    },
  });
  new Gauge({
    name: 'bayou_connections',
    help: 'Open WebSockets, streaming responses and held long-polls, by transport',
    labelNames: ['transport'],
    registers: [registry],
    collect() {
      this.set({ transport: 'websocket' }, connections.websocket());
      const streams = connections.streams();
      this.set({ transport: 'streaming' }, streams.streaming);
      this.set({ transport: 'eventsource' }, streams.eventsource);
      this.set({ transport: 'long-polling' }, bayou.stats().heldLongPolls);
    },
  });
  // One snapshot per scrape, shared by the counters below.
  let snapshot = bayou.stats();
  let fresh = false;
  // Taken once per scrape: the collectors of one scrape run within one event-loop turn.
  const current = (): ReturnType<BayouApp['stats']> => {
    if (!fresh) {
      snapshot = bayou.stats();
      fresh = true;
      setImmediate(() => {
        fresh = false;
      });
    }
    return snapshot;
  };
  const stat = (read: (s: ReturnType<BayouApp['stats']>) => number) => (): number => read(current());
  totalCounter(
    registry,
    'bayou_messages_in_total',
    'Messages received from clients',
    stat((s) => s.messagesIn),
  );
  totalCounter(
    registry,
    'bayou_publishes_total',
    'Messages published to broadcast channels',
    stat((s) => s.publishes),
  );
  totalCounter(
    registry,
    'bayou_messages_out_total',
    'Messages sent to clients',
    stat((s) => s.messagesOut),
  );
  totalCounter(
    registry,
    'bayou_frames_out_total',
    'WebSocket frames and long-poll responses sent',
    stat((s) => s.frames),
  );
  totalCounter(
    registry,
    'bayou_bytes_out_total',
    'Bytes of Bayeux payload sent to clients (WebSocket frames and long-poll bodies, UTF-8)',
    stat((s) => s.bytesOut),
  );
  totalCounter(
    registry,
    'bayou_slow_consumer_disconnects_total',
    'Sessions dropped for exceeding their queue or buffer limit',
    stat((s) => s.slowConsumers),
  );
  sessionCounters(registry, current);
  return stat;
}

/** Sessions ended by reason, handshakes by result, subscriptions held. */
function sessionCounters(registry: Registry, current: () => ReturnType<BayouApp['stats']>): void {
  const reported: Record<string, number> = {};
  /** Brings a labelled counter up to the totals kept by the kernel. */
  const sync = (counter: Counter<string>, label: string, now: Readonly<Record<string, number>>) => {
    for (const [value, total] of Object.entries(now)) {
      const key = `${label}:${value}`;
      const delta = total - (reported[key] ?? 0);
      if (delta > 0) counter.inc({ [label]: value }, delta);
      reported[key] = total;
    }
  };
  new Counter({
    name: 'bayou_sessions_removed_total',
    help: 'Sessions ended, by reason (disconnect, timeout, slow-consumer, shutdown, error, token-expired)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      sync(this, 'reason', current().removed as Record<RemovalReason, number>);
    },
  });
  new Counter({
    name: 'bayou_handshakes_total',
    help: 'Handshakes, by result (accepted, denied, failed)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      sync(this, 'result', current().handshakes);
    },
  });
  new Gauge({
    name: 'bayou_subscriptions',
    help: "Subscriptions held by this node's sessions, plain and record",
    registers: [registry],
    collect() {
      this.set(current().subscriptions);
    },
  });
}

/** The engine's failures, readiness, history bounds and backend (Redis) counters. */
function engineMetrics(
  registry: Registry,
  stat: (read: (s: ReturnType<BayouApp['stats']>) => number) => () => number,
  engine: Engine | undefined,
): void {
  totalCounter(
    registry,
    'bayou_engine_errors_total',
    'Engine calls that failed (answered with 503::engine_unavailable)',
    stat((s) => s.engineErrors),
  );
  if (engine !== undefined) {
    new Gauge({
      name: 'bayou_engine_ready',
      help: 'Whether the engine can serve (1) or not (0, e.g. Redis unreachable)',
      registers: [registry],
      collect() {
        this.set(engine.ready() ? 1 : 0);
      },
    });
  }
  if (engine?.historyStats !== undefined) historyMetrics(registry, engine.historyStats.bind(engine));
  if (hasStats(engine)) {
    totalCounter(
      registry,
      'bayou_engine_backend_errors_total',
      'Failed calls to the engine backend (Redis) and connection errors',
      () => engine.stats.errors,
    );
    totalCounter(
      registry,
      'bayou_engine_reconnects_total',
      'Connections to the engine backend (Redis) re-established after a loss',
      () => engine.stats.reconnects,
    );
    totalCounter(
      registry,
      'bayou_engine_probe_failures_total',
      'Delivery probes that did not come back on a pub/sub connection in time (the node went not ready and reconnected it)',
      () => engine.stats.probeFailures ?? 0,
    );
  }
}

/** The history an in-process engine keeps: its size now, and what the two bounds dropped. */
function historyMetrics(registry: Registry, read: () => HistoryStats): void {
  new Gauge({
    name: 'bayou_history_channels',
    help: 'Channels whose history this node keeps (memory engine) or wrote to Redis and counts (Redis engine), at most historyChannels',
    registers: [registry],
    collect() {
      this.set(read().channels);
    },
  });
  totalCounter(
    registry,
    'bayou_history_expired_total',
    'Channel histories dropped after being idle for their time-to-live',
    () => read().expired,
  );
  totalCounter(
    registry,
    'bayou_history_evicted_total',
    'Channel histories dropped, least recently published first, to stay within historyChannels',
    () => read().evicted,
  );
}
