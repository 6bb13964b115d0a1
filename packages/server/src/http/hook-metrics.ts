/** Metrics of the backend hooks over HTTP: the webhook sender and the proxy hooks. */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ProxyStats } from '../proxy/proxy-backend.js';
import type { WebhookStats } from '../webhooks/webhook-sender.js';
import { totalCounter } from './metric-helpers.js';

export interface HookStats {
  webhooks?: Readonly<WebhookStats> | undefined;
  proxy?: Readonly<ProxyStats> | undefined;
}

export function hookMetrics(registry: Registry, stats: HookStats): void {
  if (stats.webhooks !== undefined) webhookMetrics(registry, stats.webhooks);
  if (stats.proxy !== undefined) proxyMetrics(registry, stats.proxy);
}

/** The webhook sender: events delivered, POSTs that failed (and were retried), events given up. */
function webhookMetrics(registry: Registry, stats: Readonly<WebhookStats>): void {
  totalCounter(
    registry,
    'bayou_webhook_events_sent_total',
    'Webhook events the receiver accepted',
    () => stats.sent,
  );
  totalCounter(
    registry,
    'bayou_webhook_posts_failed_total',
    'Webhook POSTs that failed (error, timeout, non-2xx) and were retried',
    () => stats.failed,
  );
  totalCounter(
    registry,
    'bayou_webhook_events_dropped_total',
    'Webhook events given up: retried past retryFor, past maxQueued, or left at shutdown',
    () => stats.dropped,
  );
  new Gauge({
    name: 'bayou_webhook_events_queued',
    help: 'Webhook events waiting to be delivered on this node',
    registers: [registry],
    collect() {
      this.set(stats.queued);
    },
  });
}

/** Proxy hook calls by hook and outcome: allowed, denied, failed, timeout. */
function proxyMetrics(registry: Registry, stats: Readonly<ProxyStats>): void {
  const reported = new Map<string, number>();
  new Counter({
    name: 'bayou_proxy_calls_total',
    help: 'Calls of proxy hook backends, by hook (connect, subscribe, publish, rpc) and outcome (allowed, denied, failed, timeout)',
    labelNames: ['hook', 'outcome'],
    registers: [registry],
    collect() {
      for (const [hook, outcomes] of Object.entries(stats)) {
        for (const [outcome, now] of Object.entries(outcomes)) {
          const key = `${hook}/${outcome}`;
          const before = reported.get(key) ?? 0;
          if (now > before) this.inc({ hook, outcome }, now - before);
          reported.set(key, now);
        }
      }
    },
  });
}
