/**
 * Every option of the Bayou plugin, with its default, in one place. `resolveOptions`
 * merges the defaults, rejects unknown keys and bad values with a `BayouError` naming
 * the option, and returns a frozen object; components receive only the sub-object they
 * need.
 */
import { DEFAULTS, type Message, parseChannel } from '@bayou/protocol';
import { BayouError } from './errors.js';
import {
  type RecordPattern,
  type ResolvedRecordPattern,
  resolveRecordPatterns,
} from './records/record-options.js';
import type { ServerSession } from './session/session.js';
import type { RequestInfo, TransportName } from './types.js';

export type { RequestInfo, TransportName };

/** `false` denies; `true`, nothing or an object accepts (an object is kept as `session.auth`). */
export type AuthenticateHook = (
  message: Message,
  request: RequestInfo,
) => boolean | undefined | Record<string, unknown> | Promise<boolean | undefined | Record<string, unknown>>;

/** `false` denies with `403:<channel>:subscribe_denied` / `publish_denied`. */
export type ChannelHook = (
  session: ServerSession,
  channel: string,
  message: Message,
) => boolean | Promise<boolean>;

/** History kept by channels matching `pattern` (a channel, `/a/*` or `/a/**`). */
export interface HistoryRule {
  pattern: string;
  /** Messages kept; `0` turns history off for these channels. Default: `historySize`. */
  size?: number;
  /** ms a message stays recoverable. Default: `historyTtl`. */
  ttl?: number;
}

export interface BayouOptions {
  /** URL path of the Bayeux endpoint for both transports. Default `'/bayeux'`. */
  path?: string;
  /** Transports offered, in order of preference. Default `['websocket', 'long-polling']`. */
  transports?: TransportName[];
  /** Milliseconds a `/meta/connect` is held when nothing is queued. Default `30000`. */
  timeout?: number;
  /** Milliseconds a client waits between a connect reply and its next connect. Default `0`. */
  interval?: number;
  /** Milliseconds after its last connect ended before an idle session expires. Default `10000`. */
  maxInterval?: number;
  /**
   * ms a held long-poll waits, once it has something to send, for more to send in the same
   * response (one shared timer). Default `3`; `0` answers at the end of the event-loop turn.
   */
  longPollDelay?: number;
  /** Period of the shared sweep that ends held connects and expires sessions. Default `1000`. */
  sweepInterval?: number;
  /** Long-polls one browser (the `BAYEUX_BROWSER` cookie) may hold at once. Default `1`. */
  maxSessionsPerBrowser?: number;
  /** `interval` advised to a browser past `maxSessionsPerBrowser`. Default `2000`. */
  multiSessionInterval?: number;
  /** Origins allowed for WebSocket upgrades and CORS; `'*'` allows all. Default `['*']`. */
  allowedOrigins?: string[];
  /** Largest WebSocket frame or HTTP body in bytes (WS close 1009, HTTP 413). Default `65536`. */
  maxPayloadBytes?: number;
  /** Most messages in one frame or request. Default `1000`. */
  maxBatchMessages?: number;
  /** Most subscriptions one session may hold. Default `1000`. */
  maxSubscriptionsPerSession?: number;
  /** Most messages queued for one session before it is dropped as a slow consumer. Default `10000`. */
  maxQueuedMessages?: number;
  /** Most bytes buffered on one WebSocket before its session is dropped as slow. Default `8388608`. */
  maxBufferedBytes?: number;
  /** Decides each handshake. Default: accept all. */
  authenticate?: AuthenticateHook;
  /** Decides each subscription. Default: allow all. */
  canSubscribe?: ChannelHook;
  /** Decides each publish from a client. Default: allow all. */
  canPublish?: ChannelHook;
  /** Channels that carry records (snapshot, field deltas, conflation). Default `[]`. */
  records?: RecordPattern[];
  /** ms a record subject's provider is kept after its last subscriber left. Default `5000`. */
  providerLinger?: number;
  /**
   * ms a node's lease on a record subject's provider lasts unless renewed (every third of
   * it); after a node dies another takes over within about this time. Default `10000`.
   */
  providerLease?: number;
  /** Messages of history each channel keeps for recovery (replay); `0` keeps none. Default `100`. */
  historySize?: number;
  /** ms a message stays recoverable from history. Default `120000` (2 minutes). */
  historyTtl?: number;
  /**
   * Per channel pattern overrides of `historySize`/`historyTtl`, first match wins, e.g.
   * `[{ pattern: '/chat/**', size: 500 }, { pattern: '/ticks/*', size: 0 }]`. Default `[]`.
   */
  history?: HistoryRule[];
  /** Path of the Prometheus metrics, or `false`. Default `'/metrics'`. */
  metricsPath?: string | false;
  /** Path of the health check, or `false`. Default `'/healthz'`. */
  healthPath?: string | false;
}

export type ResolvedOptions = Readonly<
  Required<Omit<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish' | 'records' | 'history'>>
> &
  Readonly<Pick<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish'>> & {
    readonly records: readonly ResolvedRecordPattern[];
    readonly history: readonly Readonly<HistoryRule>[];
  };

export const defaultOptions: ResolvedOptions = Object.freeze({
  path: DEFAULTS.path,
  transports: ['websocket', 'long-polling'] as TransportName[],
  timeout: DEFAULTS.timeout,
  interval: 0,
  maxInterval: DEFAULTS.maxInterval,
  longPollDelay: 3,
  sweepInterval: 1_000,
  maxSessionsPerBrowser: 1,
  multiSessionInterval: 2_000,
  allowedOrigins: ['*'],
  maxPayloadBytes: DEFAULTS.maxPayloadBytes,
  maxBatchMessages: DEFAULTS.maxBatchMessages,
  maxSubscriptionsPerSession: 1_000,
  maxQueuedMessages: 10_000,
  maxBufferedBytes: 8 * 1024 * 1024,
  records: [] as ResolvedRecordPattern[],
  providerLinger: 5_000,
  providerLease: 10_000,
  historySize: 100,
  historyTtl: 120_000,
  history: [] as HistoryRule[],
  metricsPath: '/metrics',
  healthPath: '/healthz',
});

const hooks = ['authenticate', 'canSubscribe', 'canPublish'] as const;
const numeric = [
  'timeout',
  'interval',
  'maxInterval',
  'sweepInterval',
  'longPollDelay',
  'maxSessionsPerBrowser',
  'multiSessionInterval',
  'maxPayloadBytes',
  'maxBatchMessages',
  'maxSubscriptionsPerSession',
  'maxQueuedMessages',
  'maxBufferedBytes',
  'providerLinger',
  'providerLease',
  'historySize',
  'historyTtl',
] as const;

function invalid(name: string, expected: string): never {
  throw new BayouError('BAYOU_ERR_INVALID_OPTION', `option "${name}" must be ${expected}`);
}

function checkValues(o: ResolvedOptions): void {
  for (const name of numeric) {
    const v = o[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) invalid(name, 'a non-negative number');
  }
  if (o.sweepInterval < 10) invalid('sweepInterval', 'at least 10 (ms)');
  if (typeof o.path !== 'string' || !o.path.startsWith('/')) invalid('path', 'a URL path starting with "/"');
  const known: string[] = ['websocket', 'long-polling'];
  if (
    !Array.isArray(o.transports) ||
    o.transports.length === 0 ||
    o.transports.some((t) => !known.includes(t))
  ) {
    invalid('transports', 'a non-empty array of "websocket" and "long-polling"');
  }
  if (!Array.isArray(o.allowedOrigins) || o.allowedOrigins.some((x) => typeof x !== 'string')) {
    invalid('allowedOrigins', 'an array of origins (or ["*"])');
  }
  for (const p of ['metricsPath', 'healthPath'] as const) {
    if (o[p] !== false && (typeof o[p] !== 'string' || !(o[p] as string).startsWith('/')))
      invalid(p, 'a path or false');
  }
  for (const h of hooks) if (o[h] !== undefined && typeof o[h] !== 'function') invalid(h, 'a function');
}

export function resolveOptions(input: BayouOptions = {}): ResolvedOptions {
  const unknown = Object.keys(input).filter(
    (k) => !(k in defaultOptions) && !(hooks as readonly string[]).includes(k),
  );
  if (unknown.length > 0) {
    throw new BayouError('BAYOU_ERR_UNKNOWN_OPTION', `unknown option(s): ${unknown.join(', ')}`);
  }
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const merged = { ...defaultOptions, ...defined } as ResolvedOptions;
  checkValues(merged);
  if (!Array.isArray(merged.records))
    invalid('records', 'an array of { pattern, throttleMs?, maxFrequency? }');
  return Object.freeze({
    ...merged,
    transports: [...merged.transports],
    allowedOrigins: [...merged.allowedOrigins],
    records: resolveRecordPatterns(merged.records as RecordPattern[]),
    history: resolveHistoryRules(merged.history),
  });
}

function resolveHistoryRules(rules: unknown): Readonly<HistoryRule>[] {
  if (!Array.isArray(rules)) invalid('history', 'an array of { pattern, size?, ttl? }');
  return rules.map((r: HistoryRule, i) => {
    const where = `history[${i}]`;
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.pattern !== 'string' ||
      parseChannel(r.pattern) === null
    )
      invalid(`${where}.pattern`, 'a channel or pattern such as "/chat/**"');
    const unknown = Object.keys(r).filter((k) => !['pattern', 'size', 'ttl'].includes(k));
    if (unknown.length > 0)
      throw new BayouError(
        'BAYOU_ERR_UNKNOWN_OPTION',
        `unknown option(s) in ${where}: ${unknown.join(', ')}`,
      );
    for (const k of ['size', 'ttl'] as const) {
      const v = r[k];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        invalid(`${where}.${k}`, 'a non-negative number');
    }
    return Object.freeze({ ...r });
  });
}
