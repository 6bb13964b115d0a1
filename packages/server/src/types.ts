/** Names shared by every layer of the server, with no dependencies of their own. */
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The connection types: `streaming` is Bayou's HTTP streaming, `eventsource` Faye's
 * EventSource transport (both in `docs/streaming.md`).
 */
export type TransportName = 'websocket' | 'long-polling' | 'streaming' | 'eventsource';

/**
 * What a transport's carrier can do, declared once by the transport
 * (`transports/carrier-kinds.ts`); the carrier seam is `session/carrier.ts`.
 */
export interface CarrierKind {
  /** Its connection type, as a client names it (`connectionType`) and as metrics show it. */
  readonly name: TransportName;
  /**
   * Deliveries leave as frames as soon as they are flushed (a WebSocket, a held stream);
   * without it they leave in the answer to a held connect (long-polling).
   */
  readonly pushes: boolean;
  /**
   * While it is open its client sends no `/meta/connect`: the session it carries does not
   * expire while bound, and its opening connect is answered at once (the streams).
   */
  readonly keepsSession: boolean;
  /**
   * It carries the server's frames only: the client's messages, its connects included,
   * come on separate POSTs (the streams).
   */
  readonly unidirectional: boolean;
  /** A frame of it can end with the ack extension's numbered-frame marker (`ext.bayou.ackFrames`). */
  readonly numberedFrames: boolean;
  /**
   * Opened by a `/meta/connect` of its own. A unidirectional carrier without it (Faye's
   * EventSource) is opened by a request naming the session; its connects, on POSTs, are
   * answered at once.
   */
  readonly opensWithConnect: boolean;
  /**
   * Its requests carry the browser's `BAYEUX_BROWSER` cookie, checked against the session's
   * (long-polling, a stream's opening POST), and a long-poll's held connect takes one of the
   * browser's per-origin connection slots.
   */
  readonly browserBound: boolean;
  /**
   * Its link answers protocol-level pings (a WebSocket): a session that negotiated the
   * heartbeat (`ext.bayou.heartbeat`) is kept alive on it by the server's pings, and its
   * connect is held `heartbeatTimeout` instead of `timeout`.
   */
  readonly pings: boolean;
}

/** A connection type's kind by the name a client gives (`undefined` for one no transport declares). */
export type ConnectionTypes = (name: unknown) => CarrierKind | undefined;

/** Every connection type, in the default order of preference. */
export const TRANSPORT_NAMES: readonly TransportName[] = Object.freeze([
  'websocket',
  'streaming',
  'eventsource',
  'long-polling',
]);

/** What the security hooks know about the HTTP request that carried a message. */
export interface RequestInfo {
  transport: TransportName;
  /** What the request's carrier can do (`session/carrier.ts`): read this, not `transport`. */
  carrier: CarrierKind;
  /** Headers of the upgrade request (WebSocket) or of the POST (long-polling). */
  headers: IncomingHttpHeaders;
  url: string;
  remoteAddress: string | undefined;
  /**
   * The client's IP as Fastify reports it (`request.ip`): the socket's address, or the
   * `X-Forwarded-For` client when Fastify's `trustProxy` is set. Limits are keyed on it.
   */
  ip?: string | undefined;
  /** The `BAYEUX_BROWSER` cookie this request carried or was given (long-polling); else `null`. */
  browserId?: string | null;
  /** Whether the request came over TLS (`https`/`wss`, or `X-Forwarded-Proto` under `trustProxy`). */
  secure?: boolean;
}

/** Why a session ended. */
export type RemovalReason =
  | 'disconnect'
  | 'timeout'
  | 'slow-consumer'
  | 'shutdown'
  /** Handed over to another node by a drain (issue #35): it carries on there. */
  | 'handover'
  | 'error'
  /** Its token expired and was not refreshed (the auth extension). */
  | 'token-expired';

/** Where presence events of a channel go: `/presence/chat/room1` for `/chat/room1`. */
export { PRESENCE_PREFIX } from '@bayou/protocol';
