/**
 * gzip on the HTTP transports (`compression` option), for requests that send
 * `Accept-Encoding: gzip`:
 *
 * - a long-polling reply of at least `compressionThreshold` bytes is gzipped whole;
 * - a stream (`streaming`, `eventsource`) is one gzip body built frame by frame
 *   (`GzipFrames`) so that each frame reaches the client as soon as it is written: a frame
 *   past the threshold is deflated on its own and ends in a sync flush (a shared frame,
 *   one publication going to many streams in a row, is deflated once for all of them),
 *   a smaller one goes in stored (uncompressed) blocks. No compressor is kept per stream:
 *   a stream holds its running CRC-32 and length, and its end writes the gzip trailer.
 */
import { constants, crc32 } from 'node:zlib';
import { type CompressionOptions, deflateRaw } from './compression.js';
import type { FastifyHttpReply, HttpReply, RawHttpReply, ResponseStream } from './http-reply.js';

/** Whether an `Accept-Encoding` header accepts gzip (`gzip` or `*`, without `q=0`). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  for (const item of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [coding = '', ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** The reply a request gets: gzipped when compression is on and its `Accept-Encoding` takes gzip. */
export function replyFor(
  plain: RawHttpReply | FastifyHttpReply,
  acceptEncoding: string | string[] | undefined,
  options: CompressionOptions,
): HttpReply {
  return options.compression && acceptsGzip(acceptEncoding)
    ? new GzipHttpReply(plain, options.compressionThreshold)
    : plain;
}

/** A gzip member's header (RFC 1952): deflate, no flags, no time, unknown OS. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block with fixed codes: ends the deflate stream. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
const MAX_STORED = 0xffff;

/** `data` in stored (uncompressed) deflate blocks, not final, byte-aligned after. */
function storedSegment(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / MAX_STORED));
  const out = Buffer.allocUnsafe(data.length + 5 * blocks);
  let at = 0;
  for (let i = 0; i < blocks; i++) {
    const part = data.subarray(i * MAX_STORED, (i + 1) * MAX_STORED);
    out[at] = 0;
    out.writeUInt16LE(part.length, at + 1);
    out.writeUInt16LE(~part.length & 0xffff, at + 3);
    part.copy(out, at + 5);
    at += 5 + part.length;
  }
  return out;
}

let lastSource: Buffer | null = null;
let lastSegment: Buffer = Buffer.alloc(0);

/** `data` deflated on its own, ending in a sync flush; a shared `Buffer` is deflated once for the streams it goes to in a row. */
function deflatedSegment(data: Buffer, shared: boolean): Buffer {
  if (!shared) return deflateRaw(data);
  if (data !== lastSource) {
    lastSource = data;
    lastSegment = deflateRaw(data);
  }
  return lastSegment;
}

/** `data` as one gzip member: header, a whole DEFLATE stream, CRC-32 and length. */
function gzip(data: Buffer): Buffer {
  const deflated = deflateRaw(data, constants.Z_FINISH);
  const out = Buffer.allocUnsafe(GZIP_HEADER.length + deflated.length + 8);
  GZIP_HEADER.copy(out, 0);
  deflated.copy(out, GZIP_HEADER.length);
  out.writeUInt32LE(crc32(data) >>> 0, out.length - 8);
  out.writeUInt32LE(data.length >>> 0, out.length - 4);
  return out;
}

/** One stream's gzip body, frame by frame. */
export class GzipFrames {
  private crc = 0;
  private size = 0;
  private started = false;

  constructor(private readonly threshold: number) {}

  /** `chunk` as the next piece of the gzip body: whole, flushed, ready to be written. */
  frame(chunk: Buffer | string): Buffer {
    const shared = typeof chunk !== 'string';
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.crc = crc32(data, this.crc);
    this.size = (this.size + data.length) >>> 0;
    const body = data.length >= this.threshold ? deflatedSegment(data, shared) : storedSegment(data);
    if (this.started) return body;
    this.started = true;
    return Buffer.concat([GZIP_HEADER, body]);
  }

  /** The end of the body: the final block and the trailer (CRC-32, length mod 2^32). */
  close(): Buffer {
    const tail = Buffer.allocUnsafe(8);
    tail.writeUInt32LE(this.crc >>> 0, 0);
    tail.writeUInt32LE(this.size, 4);
    const end = Buffer.concat([FINAL_BLOCK, tail]);
    if (this.started) return end;
    this.started = true;
    return Buffer.concat([GZIP_HEADER, end]);
  }
}

/**
 * A reply to a request that accepts gzip: a body past the threshold is gzipped, and a
 * stream is opened with `Content-Encoding: gzip` (its link writes it through `GzipFrames`,
 * see `gzipFramesFor`).
 */
export class GzipHttpReply implements HttpReply {
  constructor(
    private readonly inner: RawHttpReply | FastifyHttpReply,
    /** Bodies and stream frames under this many bytes go uncompressed. */
    readonly threshold: number,
  ) {}

  header(name: string, value: string): void {
    this.inner.header(name, value);
  }

  send(status: number, body: string, bytes = Buffer.byteLength(body)): void {
    if (bytes < this.threshold || this.inner.sent) {
      this.inner.send(status, body, bytes);
      return;
    }
    const gzipped = gzip(Buffer.from(body));
    this.inner.header('content-encoding', 'gzip');
    this.inner.header('vary', 'accept-encoding');
    this.inner.send(status, gzipped, gzipped.length);
  }

  openStream(status: number, headers: Readonly<Record<string, string>>): ResponseStream | null {
    return this.inner.openStream(status, { ...headers, 'content-encoding': 'gzip', vary: 'accept-encoding' });
  }

  get sent(): boolean {
    return this.inner.sent;
  }

  get raw() {
    return this.inner.raw;
  }
}

/** The frame encoder of a stream opened on `reply`: `null` unless the reply is gzipped. */
export function gzipFramesFor(reply: HttpReply): GzipFrames | null {
  return reply instanceof GzipHttpReply ? new GzipFrames(reply.threshold) : null;
}
