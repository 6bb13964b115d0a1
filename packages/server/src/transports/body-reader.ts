/**
 * The one body reader of the HTTP transports. Both ways a POST reaches the endpoint read
 * its body here: the direct path from the raw `node:http` request, and the Fastify route
 * from the payload stream its content-type parsers are handed (after any `preParsing`
 * hook). The size limit, the content types and the form `message=` field are thus decided
 * once, and answer alike on both paths.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/** The content types the endpoint parses, as Fastify's parsers are registered for them. */
export const TEXT_TYPES = ['application/json', 'text/plain'] as const;
export const FORM_TYPE = 'application/x-www-form-urlencoded';

export const TEXT = 0;
export const FORM = 1;
export const UNSUPPORTED = 2;
export type BodyKind = typeof TEXT | typeof FORM | typeof UNSUPPORTED;
export const UNSUPPORTED_BODY = '{"error":"Unsupported Media Type"}';

/**
 * How a body is read, by its `Content-Type`: JSON or text as is, a form's `message` field,
 * anything else refused (415). A request without one is read as empty when it has no body
 * (then answered 400), as Fastify does.
 */
export function bodyKind(headers: IncomingHttpHeaders): BodyKind {
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
  return media === FORM_TYPE ? FORM : UNSUPPORTED;
}

export function formMessage(body: string): string {
  return new URLSearchParams(body).get('message') ?? '';
}

/** The body passed the limit (declared or read): answer 413, then `drainRequest`. */
export const TOO_LARGE = Symbol('too large');
/** The request failed before its end. */
export const UNREADABLE = null;
export type BodyResult = string | typeof TOO_LARGE | typeof UNREADABLE;

/**
 * Reads a request body as UTF-8 (a form's `message` field when `kind` is `FORM`), decoding
 * once at the end. A declared `Content-Length` past `limit` is refused before reading; a
 * body passing it while read is `TOO_LARGE` at once (the rest is left for the caller to
 * drain); `UNREADABLE` when the stream fails before its end.
 */
export function readBody(
  stream: Readable,
  headers: IncomingHttpHeaders,
  limit: number,
  kind: BodyKind,
  done: (body: BodyResult) => void,
): void {
  const declared = headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    done(TOO_LARGE);
    return;
  }
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
    const text =
      more !== null
        ? Buffer.concat(more, size).toString('utf8')
        : first === null
          ? ''
          : first.toString('utf8');
    done(kind === FORM ? formMessage(text) : text);
  };
  const onError = (): void => {
    stop();
    done(UNREADABLE);
  };
  const stop = (): void => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('error', onError);
  };
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('error', onError);
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
