/**
 * The one request/reply abstraction of the HTTP transports: where the answer to a POST goes,
 * whichever way the request came. Three carriers implement it: a Fastify reply (when an app
 * hook may see the request), the raw `ServerResponse` of the direct path, and the answer to
 * a batch forwarded by another node (`cluster/poll-forwarding.ts`). A transport writes
 * either one whole reply (`send`: long-polling) or a held response written piece by piece
 * (`openStream`: a frame per flush, for streaming transports).
 */
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export const JSON_TYPE = 'application/json;charset=utf-8';

/** A held response body, written frame by frame until `end`. */
export interface ResponseStream {
  /** Writes a chunk; `false` when it was buffered past the high-water mark (as `Writable.write`). */
  write(chunk: string | Buffer): boolean;
  end(chunk?: string | Buffer): void;
  /** Bytes written and not yet handed to the socket. */
  readonly writableLength: number;
}

export interface HttpReply {
  /** Adds a response header (before `send` or `openStream`). */
  header(name: string, value: string): void;
  /** Answers with one whole body; `bytes` is its UTF-8 length when known. */
  send(status: number, body: string, bytes?: number): void;
  /**
   * Starts a response whose body is written piece by piece (chunked: no `Content-Length`),
   * with these headers beside those set by `header`. `null` when this carrier cannot hold
   * a response (a batch forwarded by another node is answered once).
   */
  openStream(status: number, headers: Readonly<Record<string, string>>): ResponseStream | null;
  /** Whether `send` or `openStream` was called. */
  readonly sent: boolean;
  /**
   * The connection's response, to learn of the client going away (`'close'`); `null` when
   * there is none here (a forwarded batch).
   */
  readonly raw: ServerResponse | null;
}

/** A Fastify reply as an `HttpReply`: its `onSend`/`onResponse` hooks see the answer. */
export class FastifyHttpReply implements HttpReply {
  constructor(private readonly reply: FastifyReply) {}

  header(name: string, value: string): void {
    this.reply.header(name, value);
  }

  send(status: number, body: string | Buffer): void {
    this.reply.code(status).header('content-type', JSON_TYPE).send(body);
  }

  openStream(status: number, headers: Readonly<Record<string, string>>): ResponseStream {
    // Through Fastify as a stream payload, so the app's hooks see the response too.
    const body = new PassThrough();
    // A write after the client left must not throw from a flush: the close is seen anyway.
    body.on('error', ignore);
    this.reply.code(status).headers(headers).send(body);
    return body;
  }

  get sent(): boolean {
    return this.reply.sent;
  }

  get raw(): ServerResponse {
    return this.reply.raw;
  }
}

function ignore(): void {}

/** The raw `ServerResponse` of the direct path as an `HttpReply`: one `writeHead`, then the body. */
export class RawHttpReply implements HttpReply {
  /** Extra headers as name, value, name, value… (`writeHead`'s flat form). */
  private head: string[] | null = null;
  sent = false;

  constructor(readonly raw: ServerResponse) {}

  header(name: string, value: string): void {
    if (this.head === null) this.head = [name, value];
    else this.head.push(name, value);
  }

  send(status: number, body: string | Buffer, bytes = Buffer.byteLength(body)): void {
    if (this.sent) return;
    this.sent = true;
    const head = this.head ?? [];
    head.push('content-type', JSON_TYPE, 'content-length', String(bytes));
    this.raw.writeHead(status, head);
    this.raw.end(body);
  }

  openStream(status: number, headers: Readonly<Record<string, string>>): ResponseStream | null {
    if (this.sent) return null;
    this.sent = true;
    const head = this.head ?? [];
    for (const name in headers) head.push(name, headers[name] as string);
    this.raw.writeHead(status, head);
    // Headers leave now, before the first frame: the client learns the stream is open.
    this.raw.flushHeaders();
    return this.raw;
  }
}
