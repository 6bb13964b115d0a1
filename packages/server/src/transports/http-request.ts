/**
 * Reading an HTTP transport's request headers: the browser cookie and CORS. (Bodies are
 * read by `body-reader.ts`.)
 */
import type { IncomingHttpHeaders } from 'node:http';
import { corsFor } from './request-info.js';

/** The value of cookie `name` in a `Cookie` header, or `null`; scans without splitting. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  let from = 0;
  for (;;) {
    const at = header.indexOf(name, from);
    if (at < 0) return null;
    from = at + name.length;
    let before = at - 1;
    while (before >= 0 && (header[before] === ' ' || header[before] === '\t')) before--;
    if (before >= 0 && header[before] !== ';') continue;
    let eq = from;
    while (header[eq] === ' ' || header[eq] === '\t') eq++;
    if (header[eq] !== '=') continue;
    const end = header.indexOf(';', eq);
    return header.slice(eq + 1, end < 0 ? header.length : end).trim() || null;
  }
}

/**
 * Sets the CORS headers `corsFor` grants (none for no-Origin and same-origin requests,
 * credentials only for listed origins) and says whether to serve the request.
 */
export function applyCors(
  headers: IncomingHttpHeaders,
  reply: { header(name: string, value: string): unknown },
  allowed: readonly string[],
): boolean {
  // Requests without Origin (and most same-origin ones) cost no allocation.
  if (headers.origin === undefined) return true;
  const answer = corsFor(allowed, headers.origin, headers.host);
  for (const name in answer.headers) reply.header(name, answer.headers[name] as string);
  return answer.allowed;
}
