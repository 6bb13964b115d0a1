/**
 * Every option of `BayouClient`, with its default, in one place. `resolveOptions` merges
 * the defaults, rejects unknown keys and bad values with a `TypeError` naming the option,
 * and returns a frozen object.
 */

import type { DeltaSupport } from './delta-support.js';
import { longPolling } from './transports/long-polling.js';
import { streaming } from './transports/streaming.js';
import type { FetchFunction, TransportFactory, WebSocketConstructor } from './transports/transport.js';
import { websocket } from './transports/websocket.js';
import type { Ext } from './types.js';

export interface BayouClientOptions {
  /**
   * Transports to try, in order of preference. Default `[websocket, streaming, longPolling]`
   * (without `streaming` when `ack` is on and `ackFrames` off).
   */
  transports?: readonly TransportFactory[];
  /** `WebSocket` implementation (e.g. the `ws` package in Node). Default `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /** `fetch` implementation. Default `globalThis.fetch`. */
  fetch?: FetchFunction;
  /** `ext` sent with every handshake (auth tokens); a function is called before each one. Default none. */
  handshake?: Ext | (() => Ext | Promise<Ext>);
  /**
   * A connection token (a JWT from your backend), sent as `ext.auth.token` with every
   * handshake; a function is called before each one, so an expired token is replaced
   * when the server asks for a new handshake. A function is also called again
   * `tokenRefreshMargin` ms before the token's `exp`, and the new token is sent on a
   * `/meta/connect`, so the session outlives its first token. Default none.
   */
  token?: string | (() => string | Promise<string>);
  /**
   * Milliseconds before a token's `exp` (read from the JWT payload) to ask the `token`
   * function for a new one; at most half the token's remaining life. Default `30000`.
   */
  tokenRefreshMargin?: number;
  /** Milliseconds a WebSocket may take to open before the next transport is tried. Default `5000`. */
  wsOpenTimeout?: number;
  /**
   * Milliseconds within which the first bytes of a `streaming` response must arrive (the
   * server sends a padding line at once). Later than that a proxy is buffering the
   * response: the client falls back to long-polling for the session, and the `transport`
   * event says `'buffered'`. Default `3000`.
   */
  streamSenseTimeout?: number;
  /**
   * Milliseconds to wait for a reply before the transport is considered dead (added to the
   * server's hold `timeout` for `/meta/connect`). Default `10000`.
   */
  connectTimeout?: number;
  /**
   * Milliseconds after which `connect()` rejects (`BAYOU_ERR_CONNECT_TIMEOUT`, with the last
   * reason) when the client is not connected yet; it goes on trying. `0`: no deadline.
   * Default `30000`.
   */
  connectDeadline?: number;
  /** Smallest reconnect delay in milliseconds (full-jitter backoff). Default `500`. */
  minReconnectDelay?: number;
  /** Largest reconnect delay in milliseconds. Default `20000`. */
  maxReconnectDelay?: number;
  /** Smallest delay before probing WebSocket again while on a fallback transport. Default `5000`. */
  minProbeDelay?: number;
  /** Largest delay between WebSocket probes. Default `60000`. */
  maxProbeDelay?: number;
  /** Publishes kept while not connected; beyond it `publish` rejects at once. Default `1000`. */
  maxQueuedMessages?: number;
  /** Ask the server for the compact record encoding (aliases and field ids). Default `true`. */
  compactRecords?: boolean;
  /**
   * Most messages sent in one frame or request; larger batches (hundreds of resubscribes
   * after a reconnect) are split so they stay within the server's limits. Default `100`.
   */
  maxBatchMessages?: number;
  /**
   * Most bytes in one frame or request, as the server allows (`@bayou/server`'s
   * `maxPayloadBytes`). Bigger batches are split; a single larger message rejects with
   * `BAYOU_ERR_TOO_LARGE` instead of being sent. Default `65536`.
   */
  maxFrameBytes?: number;
  /**
   * Use CometD's acknowledgement extension when the server offers it: numbered connects,
   * so what was in flight when a connection died is sent again while the session lives.
   * Default `true`.
   */
  ack?: boolean;
  /**
   * With `ack`, ask a Bayou server for numbered WebSocket frames: deliveries stream at once
   * (no round trip per batch), each frame numbered; the client reports what it received
   * about once a second, and after a reconnect what was lost is sent again. `false` keeps
   * CometD's way (deliveries only in `/meta/connect` replies). Servers that do not offer it
   * (CometD) answer as for `ack` alone. Default `true`.
   */
  ackFrames?: boolean;
  /**
   * Recover every subscription from the server's history after a new session (Bayou's
   * replay extension, when the server offers it): positions are kept per channel,
   * duplicates dropped, and what cannot be recovered is reported by the `gap` event.
   * Default `true`.
   */
  recover?: boolean;
  /**
   * Milliseconds within which a WebSocket that stopped passing data (a dead proxy, a
   * one-way black hole) is given up and the client reconnects, on long-polling if the
   * WebSocket keeps failing. After half of it without a frame the held `/meta/connect`
   * is renewed; if that brings no frame either, the link is dead. `0` turns it off (then
   * only the server's hold `timeout` plus `connectTimeout` bounds the wait). Default `20000`.
   */
  deadLinkTimeout?: number;
  /**
   * Share one session and one connection among the tabs of this origin that use the same
   * URL (and, when a string, the same key: name the signed-in identity): a leader tab,
   * chosen with Web Locks, holds the connection and feeds the others over a
   * BroadcastChannel. Needs the shared build (`@bayou/client/shared`, `bayou-shared.min.js`);
   * without Web Locks or BroadcastChannel the tab has its own connection. Default `false`.
   */
  sharedConnection?: boolean | string;
  /**
   * With `sharedConnection`: the URL of `bayou-shared-worker.js` served by your app. A
   * SharedWorker then holds the connection instead of a leader tab (options must be plain
   * data: no functions such as `token` or `transports`). Default none.
   */
  sharedWorker?: string;
  /**
   * The delta decoder, for `subscribe(channel, handler, { delta: true })`: `deltas` from
   * `@bayou/client/deltas`, a separate entry so that the core bundle stays lean. Default none.
   */
  deltas?: DeltaSupport;
}

export interface ResolvedOptions {
  readonly ack: boolean;
  readonly ackFrames: boolean;
  readonly recover: boolean;
  readonly deadLinkTimeout: number;
  readonly transports: readonly TransportFactory[];
  readonly compactRecords: boolean;
  readonly maxBatchMessages: number;
  readonly maxFrameBytes: number;
  readonly WebSocket: WebSocketConstructor | undefined;
  readonly fetch: FetchFunction | undefined;
  readonly handshake: Ext | (() => Ext | Promise<Ext>) | undefined;
  readonly token: string | (() => string | Promise<string>) | undefined;
  readonly tokenRefreshMargin: number;
  readonly wsOpenTimeout: number;
  readonly streamSenseTimeout: number;
  readonly connectTimeout: number;
  readonly connectDeadline: number;
  readonly minReconnectDelay: number;
  readonly maxReconnectDelay: number;
  readonly minProbeDelay: number;
  readonly maxProbeDelay: number;
  readonly maxQueuedMessages: number;
  readonly sharedConnection: boolean | string;
  readonly sharedWorker: string | undefined;
  readonly deltas: DeltaSupport | undefined;
}

const numeric = [
  'wsOpenTimeout',
  'streamSenseTimeout',
  'connectTimeout',
  'connectDeadline',
  'minReconnectDelay',
  'maxReconnectDelay',
  'minProbeDelay',
  'maxProbeDelay',
  'maxQueuedMessages',
  'maxBatchMessages',
  'maxFrameBytes',
  'deadLinkTimeout',
  'tokenRefreshMargin',
] as const;

export function resolveOptions(options: BayouClientOptions = {}): ResolvedOptions {
  const resolved: ResolvedOptions = {
    transports: [websocket, streaming, longPolling],
    WebSocket: undefined,
    fetch: undefined,
    handshake: undefined,
    token: undefined,
    tokenRefreshMargin: 30000,
    wsOpenTimeout: 5000,
    streamSenseTimeout: 3000,
    connectTimeout: 10000,
    connectDeadline: 30000,
    minReconnectDelay: 500,
    maxReconnectDelay: 20000,
    minProbeDelay: 5000,
    maxProbeDelay: 60000,
    maxQueuedMessages: 1000,
    compactRecords: true,
    maxBatchMessages: 100,
    maxFrameBytes: 65536,
    ack: true,
    ackFrames: true,
    recover: true,
    deadLinkTimeout: 20000,
    sharedConnection: false,
    sharedWorker: undefined,
    deltas: undefined,
  };
  for (const key of Object.keys(options)) {
    if (!(key in resolved)) throw new TypeError(`BayouClient: unknown option "${key}"`);
    const value = options[key as keyof BayouClientOptions];
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  for (const key of numeric) {
    const v = resolved[key];
    if (typeof v !== 'number' || !(v >= 0) || v === Number.POSITIVE_INFINITY) {
      throw new TypeError(`BayouClient: option "${key}" must be a non-negative number`);
    }
  }
  if (resolved.minReconnectDelay > resolved.maxReconnectDelay) {
    throw new TypeError('BayouClient: option "minReconnectDelay" must not exceed "maxReconnectDelay"');
  }
  if (resolved.minProbeDelay > resolved.maxProbeDelay) {
    throw new TypeError('BayouClient: option "minProbeDelay" must not exceed "maxProbeDelay"');
  }
  if (resolved.maxBatchMessages < 1) {
    throw new TypeError('BayouClient: option "maxBatchMessages" must be at least 1');
  }
  for (const key of ['compactRecords', 'ack', 'ackFrames', 'recover'] as const) {
    if (typeof resolved[key] !== 'boolean') {
      throw new TypeError(`BayouClient: option "${key}" must be a boolean`);
    }
  }
  const shared = resolved.sharedConnection;
  if (typeof shared !== 'boolean' && (typeof shared !== 'string' || shared === '')) {
    throw new TypeError('BayouClient: option "sharedConnection" must be a boolean or a non-empty string');
  }
  if (!Array.isArray(resolved.transports) || resolved.transports.length === 0) {
    throw new TypeError('BayouClient: option "transports" must be a non-empty array');
  }
  // Acknowledged delivery over a stream needs numbered frames: a Bayou server refuses the rest.
  if (resolved.ack && !resolved.ackFrames) {
    if (options.transports?.some((t) => t.name === 'streaming')) {
      throw new TypeError('BayouClient: option "transports": streaming needs "ackFrames" (or "ack": false)');
    }
    const transports = resolved.transports.filter((t) => t.name !== 'streaming');
    (resolved as { transports: readonly TransportFactory[] }).transports = transports;
  }
  return Object.freeze(resolved);
}
