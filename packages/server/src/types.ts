/** Names shared by every layer of the server, with no dependencies of their own. */
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The connection types: `streaming` is Bayou's HTTP streaming, `eventsource` Faye's
 * EventSource transport (both in `docs/streaming.md`).
 */
export type TransportName = 'websocket' | 'long-polling' | 'streaming' | 'eventsource';

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
  | 'error'
  /** Its token expired and was not refreshed (the auth extension). */
  | 'token-expired';

/** Where presence events of a channel go: `/presence/chat/room1` for `/chat/room1`. */
export { PRESENCE_PREFIX } from '@bayou/protocol';
