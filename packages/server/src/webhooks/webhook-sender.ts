/**
 * Delivers webhook events to the receiver: batched (a batch leaves when it is full or
 * `batchWindow` ms after its first event), one POST in flight at a time so batches arrive
 * in order, signed with HMAC-SHA256 when a secret is set, and retried with exponential
 * backoff and jitter until it succeeds or its events are older than `retryFor` (then they
 * are dropped and counted). At least once: a POST whose answer was lost is sent again, so
 * receivers de-duplicate by event `id`. The queue lives in this process: what a node that
 * dies still holds is lost (the README says so).
 */
import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ResolvedWebhookOptions } from './webhook-options.js';

export type WebhookEventType =
  | 'channel.occupied'
  | 'channel.vacated'
  | 'presence.join'
  | 'presence.leave'
  | 'session.connected'
  | 'session.disconnected';

export interface WebhookEvent {
  /** Unique in the cluster: `<nodeId>.<sequence>`; the key to de-duplicate on. */
  readonly id: string;
  readonly type: WebhookEventType;
  /** When it happened, ms since the epoch. */
  readonly at: number;
  readonly channel?: string;
  readonly clientId?: string;
  readonly user?: string;
  /** For `session.disconnected`: why the session ended. */
  readonly reason?: string;
}

export interface WebhookStats {
  /** Events the receiver accepted (2xx). */
  sent: number;
  /** POSTs that failed (network error, timeout, non-2xx) and were retried. */
  failed: number;
  /** Events given up: older than `retryFor`, past `maxQueued`, or left at shutdown. */
  dropped: number;
  /** Events waiting now. */
  queued: number;
}

interface Pending {
  readonly json: string;
  readonly queuedAt: number;
}

const BACKOFF_BASE_MS = 500;

/** The `X-Bayou-Signature` value of `body` under `secret`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class WebhookSender {
  readonly stats: WebhookStats = { sent: 0, failed: 0, dropped: 0, queued: 0 };
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private waitingForRetry = false;
  private sending: Promise<void> | null = null;
  private attempt = 0;
  private closed = false;
  private seq = 0;

  constructor(
    private readonly options: ResolvedWebhookOptions,
    private readonly idPrefix: string,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Queues an event; `id` and `at` are filled in here. */
  push(event: Omit<WebhookEvent, 'id' | 'at'>): void {
    if (this.closed) {
      this.stats.dropped++;
      return;
    }
    const at = this.now();
    const full: WebhookEvent = { id: `${this.idPrefix}.${(++this.seq).toString(36)}`, ...event, at };
    this.queue.push({ json: JSON.stringify(full), queuedAt: at });
    this.trim();
    this.schedule();
  }

  /** Stops retrying and gives what is queued one last chance: all within one `timeout`. */
  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    // A POST in flight ends within its own timeout, which started before this deadline.
    const deadline = this.now() + this.options.timeout;
    await this.sending;
    while (this.queue.length > 0 && this.now() < deadline) {
      if (!(await this.sendBatch(deadline - this.now()))) break;
    }
    if (this.queue.length > 0) {
      this.log.warn({ events: this.queue.length }, 'webhooks: events not delivered before shutdown');
      this.drop(this.queue.length);
    }
  }

  private schedule(): void {
    if (this.sending !== null || this.waitingForRetry || this.closed) return;
    if (this.queue.length >= this.options.batchSize) {
      this.clearTimer();
      this.run();
    } else if (this.timer === null) {
      this.timer = setTimeout(() => this.run(), this.options.batchWindow);
      this.timer.unref();
    }
  }

  private run(): void {
    this.timer = null;
    this.waitingForRetry = false;
    this.sending = this.loop().finally(() => {
      this.sending = null;
    });
  }

  /** Sends batches back to back while there are any; a failure schedules a retry. */
  private async loop(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      this.expire();
      if (this.queue.length === 0) return;
      if (!(await this.sendBatch(this.options.timeout))) {
        this.attempt++;
        const ceiling = Math.min(this.options.maxRetryDelay, BACKOFF_BASE_MS * 2 ** (this.attempt - 1));
        // Half fixed, half random: nodes that failed together do not retry together.
        const wait = ceiling / 2 + Math.random() * (ceiling / 2);
        if (this.closed) return;
        this.waitingForRetry = true;
        this.timer = setTimeout(() => this.run(), wait);
        this.timer.unref();
        return;
      }
      if (this.attempt > 0) this.log.info({ after: this.attempt }, 'webhooks: receiver reachable again');
      this.attempt = 0;
    }
  }

  /** POSTs the oldest batch; `true` (and the batch leaves the queue) on a 2xx answer. */
  private async sendBatch(timeoutMs: number): Promise<boolean> {
    const batch = this.queue.slice(0, this.options.batchSize);
    const body = `{"events":[${batch.map((p) => p.json).join(',')}]}`;
    const headers: Record<string, string> = { ...this.options.headers, 'content-type': 'application/json' };
    if (this.options.secret !== undefined)
      headers['x-bayou-signature'] = signature(this.options.secret, body);
    let problem: string | null = null;
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) problem = `HTTP ${res.status}`;
    } catch (err) {
      problem = (err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message;
    }
    if (problem !== null) {
      this.stats.failed++;
      if (this.attempt === 0)
        this.log.warn({ problem, url: this.options.url }, 'webhooks: POST failed, retrying');
      return false;
    }
    // Events dropped while the POST was out were the oldest: the batch is still the front,
    // unless the cap dropped into it — then only its remainder is still queued.
    const k = batch.indexOf(this.queue[0] as Pending);
    if (k >= 0) this.queue.splice(0, batch.length - k);
    this.stats.sent += batch.length;
    this.stats.queued = this.queue.length;
    return true;
  }

  /** Drops events retried for longer than `retryFor` (the oldest are at the front). */
  private expire(): void {
    const oldest = this.now() - this.options.retryFor;
    let n = 0;
    while (n < this.queue.length && (this.queue[n] as Pending).queuedAt < oldest) n++;
    if (n > 0) {
      this.log.warn({ events: n }, 'webhooks: events dropped after retryFor');
      this.drop(n);
    }
  }

  private trim(): void {
    const over = this.queue.length - this.options.maxQueued;
    if (over > 0) this.drop(over);
    this.stats.queued = this.queue.length;
  }

  private drop(n: number): void {
    this.queue.splice(0, n);
    this.stats.dropped += n;
    this.stats.queued = this.queue.length;
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.waitingForRetry = false;
  }
}
