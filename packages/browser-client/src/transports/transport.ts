/**
 * The one interface every transport implements, and the minimal shapes of `WebSocket`
 * and `fetch` the client needs. They are declared here, not taken from the DOM library,
 * so the published types work in Node projects too; the browser's and `ws`'s
 * implementations fit them as they are.
 */
import type { BayouError } from '../errors.js';
import type { Message } from '../types.js';

/** What a transport reports to the client. */
export interface TransportContext {
  /** The Bayeux endpoint, `http(s)://…`; the WebSocket transport derives `ws(s)://…`. */
  readonly url: string;
  readonly WebSocket: WebSocketConstructor | undefined;
  readonly fetch: FetchFunction | undefined;
  /** ms a stream may take to deliver its first bytes before it counts as buffered by a proxy. */
  readonly streamSenseTimeout: number;
  /** ms of silence past the server's heartbeat interval after which a stream counts as dead. */
  readonly connectTimeout: number;
  /** Messages received, from any request or frame. */
  onMessages(messages: Message[], transport: Transport): void;
  /** The transport can carry nothing more (closed, request failed, bad payload). */
  onFailure(transport: Transport, error: BayouError): void;
  /**
   * One request that carried no `/meta/connect` or `/meta/handshake` failed (long-polling:
   * each request is independent, e.g. a balancer's 502 for a dead node). Its messages are
   * sent again; the session's connect, held on another request, is not given up.
   */
  onRequestFailure(transport: Transport, messages: Message[], error: BayouError): void;
}

export interface Transport {
  /** The Bayeux `connectionType`. */
  readonly name: string;
  /** Resolves when messages can be sent; rejects when it cannot open within `timeout` ms. */
  open(timeout: number): Promise<void>;
  /** Sends one batch: one WebSocket frame, one HTTP request. */
  send(messages: Message[]): void;
  /** Closes now, abandoning requests in flight. */
  close(): void;
  /**
   * Closes once the requests in flight have been answered (their messages are still
   * delivered), then calls `done`.
   */
  drain(done?: () => void): void;
  /**
   * Streaming transports only: a `/meta/connect` sent on them opens a stream that carries
   * its reply and then every delivery. `streamEnd(ended)` calls `ended` once when the stream
   * the last connect opened has ended cleanly, with the last `/meta/connect` reply it carried
   * (a recycle advises the next connect at once; an ended session, a handshake); a stream
   * that breaks is reported by `onFailure` instead.
   */
  streamEnd?(ended: (last: Message | null) => void): void;
  /** Set when the transport failed because a proxy buffers its responses (stream-sense). */
  readonly buffered?: boolean;
}

/** A transport kind, as listed in the `transports` option. */
export interface TransportFactory {
  readonly name: string;
  create(context: TransportContext): Transport;
}

/** The part of the WHATWG `WebSocket` the client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  // Handlers are typed `(event: never)` so both the DOM's and `ws`'s event types fit.
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The part of a `fetch` `Response` the client reads. */
export interface FetchResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers?: { get(name: string): string | null };
  text(): Promise<string>;
  /** The body as a stream (the streaming transport reads it as it arrives). */
  readonly body?: { getReader(): StreamReaderLike } | null;
}

/** The part of a `ReadableStreamDefaultReader` the streaming transport uses. */
export interface StreamReaderLike {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): Promise<void>;
}

/**
 * `fetch` as the client calls it: `(url, { method, headers, body, credentials, signal })`.
 * The init parameter is typed `never` so the global `fetch` (DOM or Node) fits as it is.
 */
export type FetchFunction = (url: string, init: never) => Promise<FetchResponseLike>;

/** Parses a frame or response body: a JSON array of messages, or one message. */
export function parseMessages(text: string): Message[] {
  const value: unknown = JSON.parse(text);
  const list = Array.isArray(value) ? value : [value];
  for (const m of list) {
    if (m === null || typeof m !== 'object' || typeof (m as Message).channel !== 'string') {
      throw new Error('not a Bayeux message');
    }
  }
  return list as Message[];
}
