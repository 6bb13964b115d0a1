/**
 * Reading a long-poll request off the raw `node:http` request, for the endpoint's direct
 * path: the browser cookie, CORS, the body by its content type (with the size limit), and
 * draining what is left of an oversized body after its 413.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
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

/** Bytes of an oversized body read (and dropped) after the 413, before the socket is cut. */
const DRAIN_BYTES = 1024 * 1024;
/** ms an oversized body may take to finish arriving after the 413. */
const DRAIN_MS = 5000;

/**
 * After answering an oversized body, reads the rest of it so the client — still writing —
 * gets to read the 413 instead of a connection reset; past `DRAIN_BYTES` or `DRAIN_MS`
 * the socket is closed.
 */
export function drainRequest(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  let left = DRAIN_BYTES;
  const cut = (): void => {
    clearTimeout(timer);
    raw.socket?.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

export function formMessage(body: string): string {
  return new URLSearchParams(body).get('message') ?? '';
}

export const TEXT = 0;
export const FORM = 1;
export const UNSUPPORTED = 2;
export const UNSUPPORTED_BODY = '{"error":"Unsupported Media Type"}';

/**
 * How the direct path reads a body, by its `Content-Type` as the Fastify route's parsers
 * would: JSON or text as is, a form's `message` field, anything else refused (415). A
 * request without one is read as empty when it has no body (then answered 400).
 */
export function bodyKind(headers: IncomingHttpHeaders): number {
  const type = headers['content-type'];
  if (type === undefined) {
    const length = headers['content-length'];
    return headers['transfer-encoding'] === undefined && (length === undefined || length === '0')
      ? TEXT
      : UNSUPPORTED;
  }
  if (type === 'application/json') return TEXT;
  const semi = type.indexOf(';');
  const media = (semi < 0 ? type : type.slice(0, semi)).trim().toLowerCase();
  if (media === 'application/json' || media === 'text/plain') return TEXT;
  return media === 'application/x-www-form-urlencoded' ? FORM : UNSUPPORTED;
}

export const TOO_LARGE = Symbol('too large');

/**
 * Reads a request body as UTF-8, decoding once at the end. Answers `TOO_LARGE` as soon as
 * it passes `limit` bytes (the rest is left for the caller to drain), `null` when the
 * request fails before its end.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  done: (body: string | typeof TOO_LARGE | null) => void,
): void {
  let first: Buffer | null = null;
  let more: Buffer[] | null = null;
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      stop();
      done(TOO_LARGE);
      return;
    }
    if (first === null) first = chunk;
    else if (more === null) more = [first, chunk];
    else more.push(chunk);
  };
  const onEnd = (): void => {
    stop();
    if (more !== null) done(Buffer.concat(more, size).toString('utf8'));
    else done(first === null ? '' : first.toString('utf8'));
  };
  const onError = (): void => {
    stop();
    done(null);
  };
  const stop = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}
