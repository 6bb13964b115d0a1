/**
 * Helpers both transports share: origin checks, CORS answers and the request summary for
 * hooks.
 *
 * Origin policy (what `allowedOrigins` means):
 * - A request without an `Origin` header (a server, a CLI, the CometD Java and Python
 *   clients) is not a browser page acting for a user: it is never refused for its origin.
 * - A page from the server's own origin (the `Origin`'s host equals the `Host` header) is
 *   always allowed and needs no CORS headers.
 * - Listed origins (`https://app.example.com`, or `https://*.example.com` for any
 *   subdomain) are allowed with credentials: the CORS answer echoes that one origin.
 * - `'*'` allows every origin, but never with credentials: the answer is
 *   `Access-Control-Allow-Origin: *` alone, so browsers send no cookies and a foreign
 *   page cannot ride a visitor's `BAYEUX_BROWSER` session.
 * - Anything else is refused (403 for long-polling and for the WebSocket upgrade).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { CarrierKind, RequestInfo } from '../types.js';

const ORIGIN = /^(https?):\/\/(\*\.)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;

/**
 * Checks an `allowedOrigins` list: each entry is `'*'`, `'null'` (sandboxed frames, file
 * pages) or `scheme://host[:port]` with an optional `*.` before the host. Returns the
 * entries normalized to lower case, or throws an `Error` naming the first bad one.
 */
export function checkAllowedOrigins(list: readonly string[]): string[] {
  return list.map((entry) => {
    const e = String(entry).trim().toLowerCase();
    if (e === '*' || e === 'null' || ORIGIN.test(e)) return e;
    throw new Error(
      `"${entry}" is not an origin: use scheme://host[:port] (https://app.example.com, https://*.example.com), "null" or "*"`,
    );
  });
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  const sep = origin.indexOf('://');
  return sep > 0 && origin.slice(sep + 3).toLowerCase() === host.toLowerCase();
}

function listed(allowed: readonly string[], origin: string): boolean {
  const o = origin.toLowerCase();
  for (const entry of allowed) {
    if (entry === o) return true;
    const star = entry.indexOf('://*.');
    // `https://*.example.com` matches `https://a.example.com`, `https://a.b.example.com`.
    if (star > 0 && o.startsWith(entry.slice(0, star + 3)) && o.endsWith(entry.slice(star + 4))) {
      const sub = o.slice(star + 3, o.length - (entry.length - star - 4));
      if (sub.length > 0 && !sub.includes('/') && !sub.includes(':')) return true;
    }
  }
  return false;
}

/**
 * Whether a request from `origin` may use the endpoint. `host` is the request's `Host`
 * header: without it only listed origins (or `'*'`) pass.
 */
export function originAllowed(
  allowed: readonly string[],
  origin: string | undefined,
  host?: string,
): boolean {
  if (origin === undefined) return true;
  return sameOrigin(origin, host) || listed(allowed, origin) || allowed.includes('*');
}

export interface CorsAnswer {
  allowed: boolean;
  /** Headers to set on the response (empty for no-Origin and same-origin requests). */
  headers: Record<string, string>;
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * The CORS answer to a long-polling request or preflight: whether to serve it, and the
 * headers to send. Credentials are granted to listed origins only, never to `'*'`.
 */
export function corsFor(allowed: readonly string[], origin: string | undefined, host?: string): CorsAnswer {
  if (origin === undefined || sameOrigin(origin, host)) return { allowed: true, headers: NO_HEADERS };
  if (listed(allowed, origin)) {
    return {
      allowed: true,
      headers: {
        'access-control-allow-origin': origin,
        'access-control-allow-credentials': 'true',
        vary: 'Origin',
      },
    };
  }
  if (allowed.includes('*')) return { allowed: true, headers: { 'access-control-allow-origin': '*' } };
  return { allowed: false, headers: { vary: 'Origin' } };
}

/**
 * A summary that does not keep the request (and its socket) alive with the session. `ip`
 * is Fastify's `request.ip` (honouring `trustProxy`); the socket's address without it.
 */
export function requestInfo(
  kind: CarrierKind,
  raw: IncomingMessage,
  ip?: string,
  browserId: string | null = null,
  secure = false,
): RequestInfo {
  const remoteAddress = raw.socket.remoteAddress;
  return {
    transport: kind.name,
    carrier: kind,
    headers: raw.headers,
    url: raw.url ?? '',
    remoteAddress,
    ip: ip ?? remoteAddress,
    browserId,
    secure,
  };
}

/**
 * Whether the request came over HTTP/2: Node's compatibility API keeps its pseudo-headers
 * (`:method`, `:path`…) among the headers, which HTTP/1.1 cannot carry.
 */
export function overHttp2(info: RequestInfo): boolean {
  return info.headers[':method'] !== undefined;
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
  return {
    transport: info.transport,
    carrier: info.carrier,
    headers,
    url: info.url,
    remoteAddress: info.remoteAddress,
    ip: info.ip,
    browserId: info.browserId ?? null,
    secure: info.secure === true,
  };
}
