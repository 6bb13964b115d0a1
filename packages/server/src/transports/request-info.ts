/** Helpers both transports share: origin checks and the request summary for hooks. */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { RequestInfo, TransportName } from '../options.js';

export function originAllowed(allowed: readonly string[], origin: string | undefined): boolean {
  // Non-browser clients send no Origin; the check protects browsers from foreign pages.
  if (origin === undefined || allowed.includes('*')) return true;
  return allowed.includes(origin);
}

/** A summary that does not keep the request (and its socket) alive with the session. */
export function requestInfo(transport: TransportName, raw: IncomingMessage): RequestInfo {
  return { transport, headers: raw.headers, url: raw.url ?? '', remoteAddress: raw.socket.remoteAddress };
}

export function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Headers a hook may still want after the first handshake on a long-lived WebSocket. */
const KEPT_HEADERS = ['cookie', 'authorization', 'origin', 'user-agent', 'x-forwarded-for'] as const;

/**
 * Once a WebSocket has a session, its request summary shrinks to the headers hooks use
 * for later handshakes on the same socket: the full header set would cost every idle
 * connection a few hundred bytes.
 */
export function keepAfterHandshake(info: RequestInfo): RequestInfo {
  const headers: IncomingHttpHeaders = {};
  for (const name of KEPT_HEADERS)
    if (info.headers[name] !== undefined) headers[name] = info.headers[name] as string;
  return { transport: info.transport, headers, url: info.url, remoteAddress: info.remoteAddress };
}
