/** Names shared by every layer of the server, with no dependencies of their own. */
import type { IncomingHttpHeaders } from 'node:http';

export type TransportName = 'websocket' | 'long-polling';

/** What the security hooks know about the HTTP request that carried a message. */
export interface RequestInfo {
  transport: TransportName;
  /** Headers of the upgrade request (WebSocket) or of the POST (long-polling). */
  headers: IncomingHttpHeaders;
  url: string;
  remoteAddress: string | undefined;
}

/** Why a session ended. */
export type RemovalReason = 'disconnect' | 'timeout' | 'slow-consumer' | 'shutdown' | 'error';
