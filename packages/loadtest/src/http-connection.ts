/**
 * A minimal HTTP/1.1 client connection for long-polling load: one keep-alive TCP socket,
 * requests written as pre-formatted strings and pipelined in order, responses parsed just
 * enough (status, Content-Length or chunked body, Set-Cookie). node:http's ClientRequest
 * and Agent machinery cost more per request than most servers do to answer it, which made
 * the generator, not the server, the limit of a long-polling benchmark.
 */
import net from 'node:net';

export interface HttpResponse {
  status: number;
  body: string;
  /** The `name=value` part of the first Set-Cookie header, if any. */
  cookie: string | undefined;
}

/** Settles one request; `ctx` is whatever the caller passed, so callers need no closures. */
export type ResponseHandler<C> = (
  ctx: C,
  error: Error | undefined,
  response: HttpResponse | undefined,
) => void;

interface Pending {
  handler: ResponseHandler<unknown>;
  ctx: unknown;
}

const CONN = Symbol('http-connection');
type ConnSocket = net.Socket & { [CONN]?: HttpConnection };
const HEADER_END = Buffer.from('\r\n\r\n');

function onData(this: ConnSocket, chunk: Buffer): void {
  const c = this[CONN]!;
  c.buffer = c.buffer.length === 0 ? chunk : Buffer.concat([c.buffer, chunk]);
  c.parse();
}

function onClose(this: ConnSocket): void {
  this[CONN]?.fail(new Error('connection closed'));
}

function onError(this: ConnSocket, error: Error): void {
  this[CONN]?.fail(error);
}

export class HttpConnection {
  buffer: Buffer = Buffer.alloc(0);
  private socket: ConnSocket | undefined;
  private readonly pending: Pending[] = [];
  private readonly head: string;

  constructor(
    private readonly url: URL,
    private readonly localAddress: string | undefined,
    headers: Readonly<Record<string, string>> = {},
  ) {
    const extra = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    this.head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${extra}`;
  }

  request<C>(body: string, cookie: string | undefined, handler: ResponseHandler<C>, ctx: C): void {
    if (!this.socket) this.connect();
    const extra = cookie ? `Cookie: ${cookie}\r\n` : '';
    this.pending.push({ handler: handler as ResponseHandler<unknown>, ctx });
    this.socket!.write(`${this.head}${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    s?.destroy();
  }

  private connect(): void {
    const s: ConnSocket = net.connect({
      host: this.url.hostname,
      port: Number(this.url.port || 80),
      localAddress: this.localAddress,
    });
    s.setNoDelay(true);
    s[CONN] = this;
    s.on('data', onData);
    s.on('close', onClose);
    s.on('error', onError);
    this.socket = s;
    this.buffer = Buffer.alloc(0);
  }

  /** Fails every request in flight; the next request reconnects. */
  fail(error: Error): void {
    this.socket = undefined;
    this.buffer = Buffer.alloc(0);
    for (const p of this.pending.splice(0)) p.handler(p.ctx, error, undefined);
  }

  /** Takes every complete response off the buffer, in order. */
  parse(): void {
    for (;;) {
      const end = this.buffer.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.buffer.toString('latin1', 0, end);
      const status = Number(head.slice(9, 12));
      const lower = head.toLowerCase();
      const bodyStart = end + 4;
      const parsed = lower.includes('transfer-encoding: chunked')
        ? readChunked(this.buffer, bodyStart)
        : readLength(this.buffer, bodyStart, contentLength(lower));
      if (!parsed) return;
      this.buffer = this.buffer.subarray(parsed.next);
      const p = this.pending.shift();
      p?.handler(p.ctx, undefined, { status, body: parsed.body, cookie: cookieOf(head, lower) });
    }
  }
}

function contentLength(lowerHead: string): number {
  const i = lowerHead.indexOf('content-length:');
  if (i < 0) return 0;
  return Number.parseInt(lowerHead.slice(i + 15, lowerHead.indexOf('\r\n', i) >>> 0), 10) || 0;
}

function cookieOf(head: string, lowerHead: string): string | undefined {
  const i = lowerHead.indexOf('set-cookie:');
  if (i < 0) return undefined;
  const line = head.slice(i + 11, head.indexOf('\r\n', i) >>> 0);
  return line.split(';')[0]!.trim();
}

function readLength(buf: Buffer, start: number, length: number) {
  if (buf.length < start + length) return undefined;
  return { body: buf.toString('utf8', start, start + length), next: start + length };
}

/** Decodes a chunked body once all of it (up to the zero-size chunk) has arrived. */
export function readChunked(buf: Buffer, start: number): { body: string; next: number } | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (size === 0) {
      const trailerEnd = buf.indexOf('\r\n', lineEnd + 2);
      if (trailerEnd < 0) return undefined;
      return { body: Buffer.concat(parts).toString('utf8'), next: trailerEnd + 2 };
    }
    if (buf.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
