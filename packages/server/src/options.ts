/**
 * Every option of the Bayou plugin. Their defaults and the ranges of the number options
 * are defined in `defaults.ts`, with every other default of the server. `resolveOptions`
 * merges the defaults, rejects unknown keys and bad values with a `BayouConfigError` naming
 * the option, and returns a frozen object; components receive only the sub-object they
 * need.
 */
import { type Message, parseChannel } from '@bayou/protocol';
import type { Registry } from 'prom-client';
import type { ChannelPermissions } from './auth/channel-rules.js';
import type { TokenOptions } from './auth/token-verifier.js';
import { expected, inRange, NUMBER_RANGES, SERVER_DEFAULTS } from './defaults.js';
import { type LimitOptions, resolveLimits } from './limits/limiter.js';
import { defaultMaxConnections } from './open-file-limit.js';
import { invalidOption, rejectUnknownKeys } from './option-errors.js';
import { type ProxyOptions, type ResolvedProxyOptions, resolveProxyOptions } from './proxy/proxy-options.js';
import {
  type RecordPattern,
  type ResolvedRecordPattern,
  resolveRecordPatterns,
} from './records/record-options.js';
import type { ServerSession } from './session/session.js';
import { checkAllowedOrigins } from './transports/request-info.js';
import { type RequestInfo, TRANSPORT_NAMES, type TransportName } from './types.js';
import {
  type ResolvedWebhookOptions,
  resolveWebhookOptions,
  type WebhookOptions,
} from './webhooks/webhook-options.js';

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

/** Tokens and channel permissions, applied by the built-in auth extension. */
export interface AuthConfig {
  /** Verify a JWT (`ext.auth.token`) at every handshake. Default: no tokens. */
  tokens?: TokenOptions;
  /** Who may subscribe and publish where. Default: anyone, or with tokens: authenticated subscribe, no client publish. */
  channels?: ChannelPermissions;
  /** With tokens on, accept handshakes without a token as anonymous sessions. Default `false`. */
  allowAnonymous?: boolean;
}

export interface BayouOptions {
  /** URL path of the Bayeux endpoint for both transports. Default `'/bayeux'`. */
  path?: string;
  /**
   * Connection types offered in the handshake, in order of preference. Default
   * `['websocket', 'streaming', 'eventsource', 'long-polling']`.
   */
  transports?: TransportName[];
  /**
   * Bytes written into one streaming (`streaming`, `eventsource`) response before the
   * server ends it and the client opens the next (nothing queued is lost). Default `1048576`.
   */
  streamMaxBytes?: number;
  /** ms one streaming response stays open before it is recycled the same way. Default `60000`. */
  streamMaxAge?: number;
  /** Milliseconds a `/meta/connect` is held when nothing is queued. Default `30000`. */
  timeout?: number;
  /** Milliseconds a client waits between a connect reply and its next connect. Default `0`. */
  interval?: number;
  /** Milliseconds after its last connect ended before an idle session expires. Default `10000`. */
  maxInterval?: number;
  /**
   * ms a held long-poll waits, once it has something to send, for more to send in the same
   * response (one shared timer), when the event loop is saturated (≥ 90% busy over the last
   * ~100 ms). Otherwise, and always with `0`, it is answered at the end of the event-loop
   * turn. Default `3`.
   */
  longPollDelay?: number;
  /** Period of the shared sweep that ends held connects and expires sessions. Default `1000`. */
  sweepInterval?: number;
  /** Long-polls one browser (the `BAYEUX_BROWSER` cookie) may hold at once. Default `1`. */
  maxSessionsPerBrowser?: number;
  /** `interval` advised to a browser past `maxSessionsPerBrowser`. Default `2000`. */
  multiSessionInterval?: number;
  /**
   * Origins (besides the server's own) whose pages may use long-polling and WebSocket
   * upgrades: `https://app.example.com`, `https://*.example.com`, `'null'`, or `'*'` for
   * any origin without credentials. Requests with no `Origin` (non-browser clients) are
   * never refused. Default `[]`: same-origin pages only.
   */
  allowedOrigins?: string[];
  /** Largest WebSocket frame or HTTP body in bytes (WS close 1009, HTTP 413). Default `65536`. */
  maxPayloadBytes?: number;
  /** Most messages in one frame or request. Default `1000`. */
  maxBatchMessages?: number;
  /** `permessage-deflate` on WebSockets, gzip on HTTP replies (`transports/compression.ts`). Default `false`. */
  compression?: boolean;
  /** With `compression`, payloads under this many bytes go uncompressed. Default `1024`. */
  compressionThreshold?: number;
  /** Most subscriptions one session may hold. Default `1000`. */
  maxSubscriptionsPerSession?: number;
  /** Most messages queued for one session before it is dropped as a slow consumer. Default `10000`. */
  maxQueuedMessages?: number;
  /**
   * Most characters of serialized messages (UTF-16 code units: the bytes of ASCII JSON)
   * queued for one session before it is dropped as a slow consumer; `0` = no byte cap.
   * Default `8388608` (8 MiB).
   */
  maxQueuedBytes?: number;
  /**
   * ms a connection may stay open without sending a byte, and a WebSocket without a live
   * Bayeux session (none handshaken yet, or none since its last one ended), before it is
   * closed (WebSocket close `1008`); `0` = never.
   * Default `10000`.
   */
  handshakeTimeout?: number;
  /**
   * The idle heartbeat of WebSocket sessions that negotiate it (`ext.bayou.heartbeat`, as
   * `@bayou/client` does): ms between the protocol-level pings (each followed by an empty
   * `[]` frame the client sees) that one shared wheel sends such a socket, spread over the
   * interval. A socket that sends back nothing between two pings is closed, and its session
   * expires `maxInterval` later. CometD's and Faye's clients never ask: nothing changes for
   * them. `0` = no heartbeat (every session keeps the held-connect cycle). Default `30000`.
   */
  heartbeatInterval?: number;
  /**
   * ms a heartbeat session's `/meta/connect` is held on its WebSocket (its connect replies
   * advise it as `timeout`): the pings keep it alive meanwhile. Default `300000`.
   */
  heartbeatTimeout?: number;
  /**
   * ms over which a paced drain (`bayou start` on SIGTERM, `createServer`'s `close()`,
   * `app.bayouDrain()`) ends this node's sessions, after `/readyz` turned 503: in a random
   * order, each advised to handshake again after a random interval of up to a second, so
   * the other nodes see a ramp, not a wall (a few sessions take less: one every 5 ms at
   * least). Keep it under `bayou start`'s `shutdownTimeout`. `0` = every session at once.
   * Default `5000`.
   */
  drainSpread?: number;
  /**
   * Handshakes this node admits a second (token bucket holding one second's worth);
   * past it a handshake is refused `503::node_busy` with `reconnect: handshake` and a
   * jittered `interval` (HTTP `Retry-After` too), which CometD, Faye and `@bayou/client`
   * retry; sessions that exist are never refused. `0` = no limit. Default `1000`.
   */
  maxHandshakeRate?: number;
  /**
   * Open connections (sockets) this process accepts on its server; past it a connection is
   * answered HTTP `503` (`Retry-After`) and closed (over TLS, closed). `0` = no cap.
   * Default: 90% of the process's open-file limit (`ulimit -n`) where it can be read, else `10000`.
   */
  maxConnections?: number;
  /**
   * Open connections accepted from one peer address (the TCP peer: behind a balancer, the
   * balancer); past it a new connection from that address is closed at once, before any
   * HTTP parsing, the cheapest refusal there is. `0` = no cap. Default `0`: behind a
   * balancer every client shares its address, so set it only where clients connect
   * directly (or above the balancer's connection count).
   */
  maxConnectionsPerIp?: number;
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
   * Most channels keeping history at once in the memory engine: past it the least recently
   * published channel's history is dropped for the new one (its clients then resume with
   * `recovered: false`). A channel idle for its TTL is dropped anyway. Default `100000`.
   */
  historyChannels?: number;
  /**
   * Per channel pattern overrides of `historySize`/`historyTtl`, first match wins, e.g.
   * `[{ pattern: '/chat/**', size: 500 }, { pattern: '/ticks/*', size: 0 }]`. Default `[]`.
   */
  history?: HistoryRule[];
  /**
   * Path of the Prometheus metrics, or `false`. Default `'/metrics'`, or `false` when
   * `metricsRegistry` is given (the application serves its own registry).
   */
  metricsPath?: string | false;
  /**
   * Path of the health check, or `false`. Opt-in when Bayou is a plugin in your app
   * (default `false`); `createServer` and `bayou start` serve `'/healthz'`.
   */
  healthPath?: string | false;
  /**
   * Path of the readiness check (503 while the engine cannot serve), or `false`. Opt-in in
   * your own app (default `false`); `createServer` and `bayou start` serve `'/readyz'`.
   */
  readyPath?: string | false;
  /**
   * A prom-client `Registry` of the host application to add Bayou's metrics to (without
   * the process metrics, which the application collects itself). Default: Bayou's own.
   */
  metricsRegistry?: Registry;
  /** Tokens and channel permissions (the auth extension). Default: none (an open server). */
  auth?: AuthConfig;
  /** Per-session publish rate and per-IP session and handshake limits; `0` switches one off. */
  limits?: LimitOptions;
  /**
   * Whether a long-poll naming a session is accepted without the `BAYEUX_BROWSER` cookie
   * the session was created with (CometD's `trustClientSession`). Default `false` when
   * `auth.tokens` is set (a clientId seen in a log cannot be used from elsewhere), `true`
   * otherwise. `true` with tokens suits clients that cannot keep cookies, at the risk that
   * whoever learns a clientId can act as that session until it ends.
   */
  trustClientSession?: boolean;
  /**
   * POST signed, batched event notices (sessions, channel occupancy, presence) to a
   * receiver; see `webhooks/webhook-options.ts` and the README. Default: off.
   */
  webhooks?: WebhookOptions;
  /**
   * Backend endpoints deciding connects, subscriptions and publishes and answering
   * `/service/**` calls over HTTP; see `proxy/proxy-options.ts` and the README. Default: none.
   */
  proxy?: ProxyOptions;
}

type OptionalKeys =
  | 'authenticate'
  | 'canSubscribe'
  | 'canPublish'
  | 'records'
  | 'history'
  | 'auth'
  | 'metricsRegistry'
  | 'limits'
  | 'trustClientSession'
  | 'webhooks'
  | 'proxy';

export type ResolvedOptions = Readonly<Required<Omit<BayouOptions, OptionalKeys>>> &
  Readonly<
    Pick<BayouOptions, 'authenticate' | 'canSubscribe' | 'canPublish' | 'auth' | 'metricsRegistry'>
  > & {
    readonly records: readonly ResolvedRecordPattern[];
    readonly history: readonly Readonly<HistoryRule>[];
    readonly limits: Readonly<Required<LimitOptions>>;
    readonly trustClientSession: boolean;
    readonly webhooks?: ResolvedWebhookOptions;
    readonly proxy?: ResolvedProxyOptions;
  };

/** The plugin's defaults (`defaults.ts`), with this machine's connection cap. */
export const defaultOptions: ResolvedOptions = Object.freeze({
  ...SERVER_DEFAULTS.plugin,
  maxConnections: defaultMaxConnections(),
  records: [] as ResolvedRecordPattern[],
  history: [] as HistoryRule[],
  limits: SERVER_DEFAULTS.limits,
});

const hooks = ['authenticate', 'canSubscribe', 'canPublish'] as const;
/** Optional keys without a default value. */
const extraKeys = ['auth', 'metricsRegistry', 'webhooks', 'proxy'] as const;

function checkValues(o: ResolvedOptions): void {
  for (const [name, range] of Object.entries(NUMBER_RANGES))
    if (!inRange(range, o[name as keyof typeof NUMBER_RANGES])) invalidOption(name, expected(range));
  if (typeof o.path !== 'string' || !o.path.startsWith('/'))
    invalidOption('path', 'a URL path starting with "/"');
  if (
    !Array.isArray(o.transports) ||
    o.transports.length === 0 ||
    o.transports.some((t) => !TRANSPORT_NAMES.includes(t)) ||
    new Set(o.transports).size !== o.transports.length
  ) {
    invalidOption(
      'transports',
      `a non-empty array of distinct names among ${TRANSPORT_NAMES.map((t) => `"${t}"`).join(', ')}`,
    );
  }
  if (!Array.isArray(o.allowedOrigins) || o.allowedOrigins.some((x) => typeof x !== 'string')) {
    invalidOption('allowedOrigins', 'an array of origins (or ["*"])');
  }
  try {
    checkAllowedOrigins(o.allowedOrigins);
  } catch (err) {
    invalidOption('allowedOrigins', `a list of origins: ${(err as Error).message}`);
  }
  const reg = o.metricsRegistry as { registerMetric?: unknown } | undefined;
  if (reg !== undefined && (reg === null || typeof reg.registerMetric !== 'function'))
    invalidOption('metricsRegistry', 'a prom-client Registry');
  if (o.auth !== undefined && (o.auth === null || typeof o.auth !== 'object'))
    invalidOption('auth', 'an object { tokens?, channels?, allowAnonymous? }');
  for (const b of ['trustClientSession', 'compression'] as const)
    if (typeof o[b] !== 'boolean') invalidOption(b, 'a boolean');
  for (const p of ['metricsPath', 'healthPath', 'readyPath'] as const) {
    if (o[p] !== false && (typeof o[p] !== 'string' || !(o[p] as string).startsWith('/')))
      invalidOption(p, 'a path or false');
  }
  for (const h of hooks) if (o[h] !== undefined && typeof o[h] !== 'function') invalidOption(h, 'a function');
}

export function resolveOptions(input: BayouOptions = {}): ResolvedOptions {
  rejectUnknownKeys(input, [...Object.keys(defaultOptions), ...hooks, ...extraKeys]);
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const merged = { ...defaultOptions, ...defined } as ResolvedOptions;
  // Cookies are checked by default once tokens identify users; metrics go to the app's registry.
  if (input.trustClientSession === undefined)
    (merged as { trustClientSession: boolean }).trustClientSession = input.auth?.tokens === undefined;
  if (input.metricsPath === undefined && input.metricsRegistry !== undefined)
    (merged as { metricsPath: string | false }).metricsPath = false;
  checkValues(merged);
  if (!Array.isArray(merged.records))
    invalidOption('records', 'an array of { pattern, throttleMs?, maxFrequency? }');
  return Object.freeze({
    ...merged,
    transports: [...merged.transports],
    allowedOrigins: checkAllowedOrigins(merged.allowedOrigins),
    limits: resolveLimits(input.limits ?? {}),
    records: resolveRecordPatterns(merged.records as RecordPattern[]),
    history: resolveHistoryRules(merged.history),
    ...(input.webhooks === undefined ? {} : { webhooks: resolveWebhookOptions(input.webhooks) }),
    ...(input.proxy === undefined ? {} : { proxy: resolveProxyOptions(input.proxy) }),
  });
}

function resolveHistoryRules(rules: unknown): Readonly<HistoryRule>[] {
  if (!Array.isArray(rules)) invalidOption('history', 'an array of { pattern, size?, ttl? }');
  return rules.map((r: HistoryRule, i) => {
    const where = `history[${i}]`;
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.pattern !== 'string' ||
      parseChannel(r.pattern) === null
    )
      invalidOption(`${where}.pattern`, 'a channel or pattern such as "/chat/**"');
    rejectUnknownKeys(r, ['pattern', 'size', 'ttl'], where);
    for (const k of ['size', 'ttl'] as const) {
      const v = r[k];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        invalidOption(`${where}.${k}`, 'a non-negative number');
    }
    return Object.freeze({ ...r });
  });
}
