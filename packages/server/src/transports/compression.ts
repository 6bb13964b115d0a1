/**
 * Compression on the wire, off by default (`compression` option): `permessage-deflate`
 * (RFC 7692) on WebSockets, here, and gzip on HTTP replies (`http-compression.ts`). Memory is what bounds it:
 * zlib's defaults cost about 320 KiB per connection, so
 *
 * - the server never keeps a compressor per socket. It negotiates
 *   `server_no_context_takeover` (each message compressed on its own) and compresses a
 *   frame with the process's one zlib stream, reset per frame (window 2^11, memLevel 4,
 *   ~20 KiB for the process: `deflater.ts`); a frame shared by many sockets (the same
 *   messages reaching sessions alike in a turn) is compressed once for all of them, a
 *   numbered frame's shared head too (`compressedFrameOfParts`);
 * - what clients send is inflated by `ws` with a window of at most 2^11
 *   (`client_max_window_bits=11`; a client that cannot limit its window gets no
 *   compression) and no client context takeover, at most `WS_CONCURRENCY` inflates at
 *   once; the inflater `ws` makes for a message is let go once it is in
 *   (`releaseInflater` in `ws-fast-path.ts`), so an idle socket holds no zlib memory; a
 *   message inflating past `maxPayloadBytes` closes the socket with 1009;
 * - a payload under `compressionThreshold` bytes goes uncompressed (it would not shrink
 *   enough to pay for the CPU).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { constants } from 'node:zlib';
import type { PerMessageDeflateOptions } from 'ws';
import { RawDeflater } from './deflater.js';
import { finalFrame } from './ws-fast-path.js';

/** LZ77 window of every compressor and of what clients may send: 2^11 = 2 KiB. */
export const WINDOW_BITS = 11;
/** zlib's hash memory level (1–9; 8 is its default): 4 halves its tables. */
export const MEM_LEVEL = 4;
/** zlib level: 1 compresses Bayeux JSON within a few percent of 6 for less CPU. */
export const DEFLATE_LEVEL = 1;
/** Output buffer of an inflater (zlib's default is 16 KiB). */
export const INFLATE_CHUNK = 1024;
/** Most inflates of client frames `ws` runs at once (its thread-pool limiter). */
export const WS_CONCURRENCY = 10;

/** The options compression needs. */
export interface CompressionOptions {
  readonly compression: boolean;
  readonly compressionThreshold: number;
}

/** `ws`'s `perMessageDeflate` setting for these options: `false` when compression is off. */
export function perMessageDeflate(options: CompressionOptions): PerMessageDeflateOptions | false {
  if (!options.compression) return false;
  return {
    serverNoContextTakeover: true,
    // Clients compress each message on its own too, so their inflater can go between messages.
    clientNoContextTakeover: true,
    serverMaxWindowBits: WINDOW_BITS,
    clientMaxWindowBits: WINDOW_BITS,
    threshold: options.compressionThreshold,
    concurrencyLimit: WS_CONCURRENCY,
    zlibDeflateOptions: { level: DEFLATE_LEVEL, memLevel: MEM_LEVEL, windowBits: WINDOW_BITS },
    // zlib streams allocate an output buffer of `chunkSize` (16 KiB by default) each.
    zlibInflateOptions: { windowBits: WINDOW_BITS, chunkSize: INFLATE_CHUNK },
  };
}

/**
 * Leaves in a WebSocket upgrade's `Sec-WebSocket-Extensions` only the `permessage-deflate`
 * offers the bounds above can accept: the client lets the server cap its window
 * (`client_max_window_bits`, bare or ≥ 11) and asks no smaller server window than 11.
 * `ws` answers an upgrade whose every offer it cannot accept with 400; with the header
 * cut down the client connects uncompressed instead.
 */
export function boundDeflateOffers(headers: IncomingHttpHeaders): void {
  const header = headers['sec-websocket-extensions'];
  if (header === undefined) return;
  const kept = header.split(',').filter(acceptableOffer);
  if (kept.length === 0) delete headers['sec-websocket-extensions'];
  else headers['sec-websocket-extensions'] = kept.join(',');
}

function acceptableOffer(offer: string): boolean {
  const [name = '', ...params] = offer.split(';').map((p) => p.trim().toLowerCase());
  if (name !== 'permessage-deflate') return false;
  let clientBounded = false;
  for (const param of params) {
    const [key, raw] = param.split('=').map((p) => p.trim().replace(/^"|"$/g, ''));
    if (key === 'client_max_window_bits') clientBounded = raw === undefined || Number(raw) >= WINDOW_BITS;
    else if (key === 'server_max_window_bits' && !(Number(raw) >= WINDOW_BITS)) return false;
  }
  return clientBounded;
}

/** The process's one compressor (reset per payload): WebSocket frames and HTTP bodies. */
const deflater = new RawDeflater({ level: DEFLATE_LEVEL, memLevel: MEM_LEVEL, windowBits: WINDOW_BITS });

/**
 * `input` as raw DEFLATE with the bounds above, compressed on its own, ending in a sync
 * flush (`00 00 ff ff`; more may follow) or, with `Z_FINISH`, a whole DEFLATE stream.
 */
export function deflateRaw(input: Buffer, flush: number = constants.Z_SYNC_FLUSH): Buffer {
  return deflater.deflate(input, flush);
}

/**
 * `payload` compressed as a `permessage-deflate` message: raw DEFLATE ending in a sync
 * flush, whose `00 00 ff ff` tail is left off (RFC 7692 §7.2.1).
 */
export function deflateMessage(payload: Buffer | string): Buffer {
  const out = deflater.deflate(typeof payload === 'string' ? Buffer.from(payload) : payload);
  return out.subarray(0, out.length - 4);
}

/** An unmasked, final text frame with RSV1 set (compressed), holding `deflated`. */
export function deflatedTextFrame(deflated: Buffer): Buffer {
  return finalFrame(0xc1, deflated, deflated.length);
}

let lastPayload: Buffer | null = null;
let lastFrame: Buffer = Buffer.alloc(0);

let lastHead: Buffer | null = null;
let lastHeadDeflated: Buffer = Buffer.alloc(0);
/** Room a stored block's header takes: a byte of block type, its length and that length's complement. */
const STORED_HEADER = 5;
/** Most bytes a stored block holds. */
const MAX_STORED = 0xffff;

/**
 * A compressed text frame of `head` then `tail`: `head` (the same `Buffer` sent to many
 * sockets in a row) deflated once, ending in its sync flush, then `tail` in a stored
 * (uncompressed) block — a `permessage-deflate` message is any raw DEFLATE data without
 * its final `00 00 ff ff`, and the stored block leaves it byte-aligned as a flush does.
 */
export function compressedFrameOfParts(head: Buffer, tail: string): Buffer {
  if (head !== lastHead) {
    lastHead = head;
    lastHeadDeflated = deflater.deflate(head);
  }
  const tailLength = Buffer.byteLength(tail);
  if (tailLength > MAX_STORED) return compressedFrame(Buffer.concat([head, Buffer.from(tail)]));
  const payload = Buffer.allocUnsafe(lastHeadDeflated.length + STORED_HEADER + tailLength);
  lastHeadDeflated.copy(payload, 0);
  let at = lastHeadDeflated.length;
  payload[at] = 0;
  payload.writeUInt16LE(tailLength, at + 1);
  payload.writeUInt16LE(~tailLength & 0xffff, at + 3);
  at += STORED_HEADER;
  payload.write(tail, at, tailLength, 'utf8');
  return deflatedTextFrame(payload);
}

/**
 * A compressed text frame of `payload`; a shared payload (the same `Buffer` sent to many
 * sockets in a row) is compressed and framed once.
 */
export function compressedFrame(payload: Buffer | string): Buffer {
  if (typeof payload === 'string') return deflatedTextFrame(deflateMessage(payload));
  if (payload !== lastPayload) {
    lastPayload = payload;
    lastFrame = deflatedTextFrame(deflateMessage(payload));
  }
  return lastFrame;
}
