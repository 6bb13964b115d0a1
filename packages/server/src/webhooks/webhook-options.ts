/** The `webhooks` option: where events go, how they are signed, batched and retried. */

import { SERVER_DEFAULTS } from '../defaults.js';
import { rejectUnknownKeys, scopedInvalid } from '../option-errors.js';

export interface WebhookOptions {
  /** The receiver: an `http://` or `https://` URL each batch is POSTed to. Required. */
  url: string;
  /**
   * Signs each body: `X-Bayou-Signature: sha256=<hex HMAC-SHA256 of the raw body>`.
   * Default: none (no signature header).
   */
  secret?: string;
  /** Extra request headers, e.g. `{ authorization: 'Bearer …' }`. Default: none. */
  headers?: Record<string, string>;
  /** ms the first event of a batch waits for others to join it. Default `250`. */
  batchWindow?: number;
  /** Most events in one POST (a full batch leaves at once). Default `100`. */
  batchSize?: number;
  /** ms a POST may take before it counts as failed and is retried. Default `5000`. */
  timeout?: number;
  /**
   * ms an event keeps being retried (exponential backoff from 0.5 s, doubling up to
   * `maxRetryDelay`, with jitter) before it is dropped and counted. Default `300000` (5 minutes).
   */
  retryFor?: number;
  /** Longest wait between two attempts, in ms. Default `30000`. */
  maxRetryDelay?: number;
  /** Most events waiting on this node; past it the oldest are dropped and counted. Default `10000`. */
  maxQueued?: number;
  /** ms between sweeps that free channels occupied by dead nodes (`channel.vacated`). Default `2000`. */
  deadNodeSweep?: number;
}

export type ResolvedWebhookOptions = Readonly<Required<Omit<WebhookOptions, 'secret' | 'headers'>>> & {
  readonly secret: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
};

/** How often dead nodes' channels are freed (ms), with or without webhooks. */
export const DEAD_NODE_SWEEP_MS = SERVER_DEFAULTS.webhooks.deadNodeSweep;

/** The webhooks' defaults (defined in `defaults.ts`). */
const DEFAULTS = SERVER_DEFAULTS.webhooks;

const KEYS = new Set(['url', 'secret', 'headers', ...Object.keys(DEFAULTS)]);

/**
 * Why `url` cannot be a hook's endpoint, or `null`. fetch refuses URLs with credentials,
 * so they would fail every call: they go in headers instead.
 */
export function badEndpoint(url: unknown): string | null {
  if (typeof url !== 'string' || !/^https?:\/\/./.test(url)) return 'an http:// or https:// URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'an http:// or https:// URL';
  }
  if (parsed.username !== '' || parsed.password !== '')
    return 'a URL without user:password@ (send credentials in "headers", e.g. authorization)';
  return null;
}

const invalid: (name: string, expected: string) => never = scopedInvalid('webhooks');

export function resolveWebhookOptions(input: unknown): ResolvedWebhookOptions {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    invalid('', 'an object { url, secret?, batchWindow?, … }');
  const o = input as Record<string, unknown>;
  rejectUnknownKeys(o, KEYS, 'webhooks');
  const bad = badEndpoint(o.url);
  if (bad !== null) invalid('url', bad);
  const headers = o.headers ?? {};
  if (
    headers === null ||
    typeof headers !== 'object' ||
    Object.values(headers).some((v) => typeof v !== 'string')
  )
    invalid('headers', 'an object of header names to strings');
  if (o.secret !== undefined && (typeof o.secret !== 'string' || o.secret === ''))
    invalid('secret', 'a non-empty string');
  const out: Record<string, unknown> = {
    url: o.url,
    secret: o.secret,
    headers: Object.freeze({ ...headers }),
  };
  for (const [k, d] of Object.entries(DEFAULTS)) {
    const v = o[k] ?? d;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) invalid(k, 'a non-negative number');
    out[k] = v;
  }
  if ((out.batchSize as number) < 1) invalid('batchSize', 'at least 1');
  if ((out.maxRetryDelay as number) < 500) invalid('maxRetryDelay', 'at least 500 (ms)');
  if ((out.timeout as number) < 1) invalid('timeout', 'at least 1 (ms)');
  if ((out.deadNodeSweep as number) < 10) invalid('deadNodeSweep', 'at least 10 (ms)');
  return Object.freeze(out) as ResolvedWebhookOptions;
}
