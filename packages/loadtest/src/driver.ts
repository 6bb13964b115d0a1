/**
 * The seam between scenarios and wire protocols. A driver holds many simulated clients as
 * small records indexed by number; scenarios only open, subscribe and publish by index.
 * Deliveries are reported through one sink function, not per-client callbacks.
 */

import { BAYOU_EXT, EXT_HEARTBEAT, EXT_RECORDS, type Message } from '@bayou/protocol';

/** Called for every delivered test message: its id and its (intended) send time in ms. */
export type DeliverySink = (id: number, sentAt: number) => void;

/**
 * Receives server-produced record messages (feed --source demo) instead of `sink`: the
 * client's index, the subject, the data and the message's `ext.r` ('s' snapshot, 'd' delta,
 * or undefined from a server that does not tag them).
 */
export interface RecordSink {
  onRecord(index: number, channel: string, data: unknown, kind: unknown): void;
}

/**
 * The `,"ext":{…}` part of the handshake: `--handshake-ext` (e.g. a token), plus Bayou's
 * tagged records when `records` is set and its idle heartbeat when `heartbeat` is (as
 * `@bayou/client` asks). Empty when there is none of them.
 */
export function handshakeExt(options: Pick<DriverOptions, 'records' | 'handshakeExt' | 'heartbeat'>): string {
  const ext: Record<string, unknown> = { ...(options.handshakeExt ?? {}) };
  const ours: Record<string, unknown> = {};
  if (options.records) ours[EXT_RECORDS] = true;
  if (options.heartbeat) ours[EXT_HEARTBEAT] = true;
  if (Object.keys(ours).length > 0) {
    const bayou = ext[BAYOU_EXT];
    ext[BAYOU_EXT] = { ...(typeof bayou === 'object' && bayou !== null ? bayou : {}), ...ours };
  }
  return Object.keys(ext).length === 0 ? '' : `,"ext":${JSON.stringify(ext)}`;
}

export interface DriverOptions {
  /** Endpoint URL (http(s) or ws(s); drivers convert the scheme). */
  url: string;
  /** Source addresses to spread connections over; empty = system default. */
  localAddresses: readonly string[];
  /** Raw WebSocket only: client i binds source port base + floor(i / addresses); 0/absent = the kernel picks. */
  localPortBase?: number;
  /** Extra HTTP headers on every WebSocket upgrade and HTTP request (long-polling, streams) (e.g. Authorization). */
  headers?: Readonly<Record<string, string>>;
  /** Merged into every handshake's `ext` (e.g. `{ "token": "…" }`). */
  handshakeExt?: Readonly<Record<string, unknown>> | null;
  /** WebSocket clients offer `permessage-deflate` (with `client_max_window_bits`, as browsers do). */
  compression?: boolean;
  /**
   * Handshakes ask for Bayou's idle heartbeat (`ext.bayou.heartbeat`), as `@bayou/client`
   * does: a Bayou server then pings an idle WebSocket (answered by `ws`) and sends `[]`
   * instead of answering its held connect every `timeout`.
   */
  heartbeat?: boolean;
  sink: DeliverySink;
  /** When set, every non-meta message goes here instead of `sink`, and the handshake asks for tagged records. */
  records?: RecordSink;
  /** Called once per WebSocket frame or HTTP response that carried deliveries. */
  onFrame?: () => void;
  /** Called when a session is lost after setup (closed socket, 402 from the server). */
  onSessionLost?: (index: number, reason?: string) => void;
}

export interface Driver {
  /** Opens client `index` (connection + handshake). Resolves once it can subscribe and publish. */
  open(index: number): Promise<void>;
  /** Subscribes client `index` to the channels; resolves when every one is acknowledged. */
  subscribe(index: number, channels: readonly string[]): Promise<void>;
  /** Publishes `dataJson` (already serialized) on `channel` from client `index`. */
  publish(index: number, channel: string, dataJson: string): void;
  /** Publishes each `[channel, dataJson]` from client `index`, all in one frame (WebSocket drivers). */
  publishBurst?(index: number, messages: readonly (readonly [string, string])[]): void;
  /** Clients currently open. */
  connected(): number;
  /** Closes every client. */
  close(): Promise<void>;
}

export type DriverFactory = (options: DriverOptions) => Driver;

/** A promise with its settle functions, for the few setup steps that wait on a reply. */
export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Reads a test payload `{"i":id,"t":sentAt,...}` and forwards it to the sink. */
export function deliverPayload(sink: DeliverySink, data: unknown): void {
  if (typeof data !== 'object' || data === null) return;
  const d = data as { i?: unknown; t?: unknown };
  if (typeof d.i === 'number' && typeof d.t === 'number') sink(d.i, d.t);
}

export function toWsUrl(url: string): string {
  return url.replace(/^http(s?):/, 'ws$1:');
}

export function toHttpUrl(url: string): string {
  return url.replace(/^ws(s?):/, 'http$1:');
}

/**
 * The ms to wait before handshaking again when `reply` refused a handshake with retry
 * advice (a node past its handshake rate or draining: `503:…:node_busy`, `reconnect:
 * handshake`), as CometD and `@bayou/client` do; `null` for a refusal that is final.
 */
export function handshakeRetry(reply: Message | undefined): number | null {
  const advice = reply?.advice;
  if (advice?.reconnect !== 'handshake' || !String(reply?.error).startsWith('503:')) return null;
  return typeof advice.interval === 'number' ? advice.interval : 1000;
}
