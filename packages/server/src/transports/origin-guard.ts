/**
 * The endpoint's origin check, one per server and shared by every transport: whether a
 * page's request is served (the policy is `corsFor` in `request-info.ts`), its CORS
 * headers, and what a refused page and the operator are told.
 *
 * A refused page can read that it is refused, and nothing else: the 403 to a request
 * carries `Access-Control-Allow-Origin` for that origin but never credentials, so a page's
 * request without cookies (the client's diagnosis after an opaque network error: a simple
 * `text/plain` POST, no preflight) reads `403 origin not allowed` instead of failing
 * blindly every few seconds. A credentialed request still cannot read it, a preflight is
 * still refused (403, no grant), and the request is refused before its body is run. A
 * refused WebSocket upgrade shows a page no status at all.
 *
 * The first refusal of each origin is logged (warn) with the fix. The origins already logged
 * are kept in a bounded set, the oldest forgotten first (then logged again if it comes back).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { corsFor } from './request-info.js';

/** How many refused origins are remembered as logged. */
export const MAX_REMEMBERED_ORIGINS = 1000;
/** The body of a refusal. */
export const ORIGIN_REFUSED_BODY = '{"error":"origin not allowed"}';
/** Longest origin quoted in the log (a header can be kilobytes). */
const MAX_LOGGED = 200;

interface HeaderSink {
  header(name: string, value: string): unknown;
}

export class OriginGuard {
  private readonly logged = new Set<string>();

  constructor(
    private readonly allowed: readonly string[],
    private readonly log: { warn(obj: object, msg: string): void },
    private readonly max = MAX_REMEMBERED_ORIGINS,
  ) {}

  /**
   * An HTTP request or preflight: sets its CORS headers and says whether to serve it. When
   * it says `false`, answer `403` with `ORIGIN_REFUSED_BODY`; a refused request (not a
   * preflight) is given the headers that let a page read that refusal without credentials.
   */
  admit(headers: IncomingHttpHeaders, reply: HeaderSink, transport: string, preflight = false): boolean {
    const origin = headers.origin;
    // Requests without Origin (and most same-origin ones) cost no allocation.
    if (origin === undefined) return true;
    // HTTP/2 names the host in `:authority` (browsers send no `Host` there).
    const answer = corsFor(
      this.allowed,
      origin,
      headers.host ?? (headers[':authority'] as string | undefined),
    );
    const set = answer.allowed || preflight ? answer.headers : readableRefusal(origin);
    for (const name in set) reply.header(name, set[name] as string);
    if (!answer.allowed) this.refused(origin, transport);
    return answer.allowed;
  }

  /** A WebSocket upgrade from `origin` with `host`: whether to accept it. */
  admitsUpgrade(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    const allowed = corsFor(this.allowed, origin, host).allowed;
    if (!allowed) this.refused(origin, 'websocket');
    return allowed;
  }

  /** How many refused origins are remembered (at most the bound). */
  get remembered(): number {
    return this.logged.size;
  }

  private refused(origin: string, transport: string): void {
    const key = origin.slice(0, MAX_LOGGED);
    if (this.logged.has(key)) return;
    if (this.logged.size >= this.max) {
      const oldest = this.logged.values().next().value as string;
      this.logged.delete(oldest);
    }
    this.logged.add(key);
    this.log.warn(
      { origin: key, transport },
      `refused a page from origin ${key}: not an allowed origin. To let its pages connect, start the server with --allowed-origins ${key} (the allowedOrigins option)`,
    );
  }
}

/** Lets a page read its 403 from a request without credentials (no `Allow-Credentials`). */
function readableRefusal(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}
