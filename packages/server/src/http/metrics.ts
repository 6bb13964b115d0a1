/**
 * Prometheus metrics: prom-client's process and Node metrics plus Bayou's own, read from
 * plain counters at scrape time so the hot path never touches a metric object.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { BayouApp } from '../bayou-app.js';

export interface ConnectionCounts {
  websocket(): number;
}

/** A counter that reports a running total kept elsewhere. */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}

export function createMetrics(bayou: BayouApp, connections: ConnectionCounts): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
    help: 'Open WebSockets and held long-polls, by transport',
    labelNames: ['transport'],
    registers: [registry],
    collect() {
      this.set({ transport: 'websocket' }, connections.websocket());
      this.set({ transport: 'long-polling' }, bayou.stats().heldLongPolls);
    },
  });
  // One snapshot per scrape, shared by the counters below.
  let snapshot = bayou.stats();
  let taken = 0;
  const stat = (read: (s: ReturnType<BayouApp['stats']>) => number) => (): number => {
    if (Date.now() - taken > 50) {
      snapshot = bayou.stats();
      taken = Date.now();
    }
    return read(snapshot);
  };
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
    'Payload sent to clients (UTF-16 units ≈ bytes)',
    stat((s) => s.bytesOut),
  );
  totalCounter(
    registry,
    'bayou_slow_consumer_disconnects_total',
    'Sessions dropped for exceeding their queue or buffer limit',
    stat((s) => s.slowConsumers),
  );
  totalCounter(
    registry,
    'bayou_engine_errors_total',
    'Engine calls that failed (answered with 503::engine_unavailable)',
    stat((s) => s.engineErrors),
  );
  return registry;
}
