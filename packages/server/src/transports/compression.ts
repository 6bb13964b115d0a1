/**
 * Compression on the wire, off by default (`compression` option): `permessage-deflate`
 * (RFC 7692) on WebSockets, here, and gzip on HTTP replies (`http-compression.ts`). Memory is what bounds it:
 * zlib's defaults cost about 320 KiB per connection, so
 *
 * - the server never keeps a compressor per socket. It negotiates
 *   `server_no_context_takeover` (each message compressed on its own) and compresses a
 *   frame with a short-lived zlib stream (window 2^11, memLevel 4, ~20 KiB while it runs);
 *   a frame shared by many sockets (one publication reaching sessions alone in a turn) is
 *   compressed once for all of them;
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
import { constants, deflateRawSync, type ZlibOptions } from 'node:zlib';
import type { PerMessageDeflateOptions } from 'ws';

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

const DEFLATE: ZlibOptions = Object.freeze({
  level: DEFLATE_LEVEL,
  memLevel: MEM_LEVEL,
  windowBits: WINDOW_BITS,
  finishFlush: constants.Z_SYNC_FLUSH,
});

/**
 * `payload` compressed as a `permessage-deflate` message: raw DEFLATE ending in a sync
 * flush, whose `00 00 ff ff` tail is left off (RFC 7692 §7.2.1).
 */
export function deflateMessage(payload: Buffer | string): Buffer {
  const out = deflateRawSync(payload, DEFLATE);
  return out.subarray(0, out.length - 4);
}

/** An unmasked, final text frame with RSV1 set (compressed), holding `deflated`. */
export function deflatedTextFrame(deflated: Buffer): Buffer {
  const length = deflated.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0xc1;
  if (length < 126) frame[1] = length;
  else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  deflated.copy(frame, headerLength);
  return frame;
}

/** zlib options of a piece of a larger stream: deflated on its own, ending in a sync flush. */
export const SEGMENT: ZlibOptions = Object.freeze({
  level: DEFLATE_LEVEL,
  memLevel: MEM_LEVEL,
  windowBits: WINDOW_BITS,
  finishFlush: constants.Z_SYNC_FLUSH,
});
const MAX_STORED = 0xffff;

/** `data` in stored (uncompressed) deflate blocks, not final, byte-aligned after. */
export function storedSegment(data: Buffer): Buffer {
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

/**
 * A frame of several messages as DEFLATE pieces: each message deflated on its own (ending
 * in a sync flush, so pieces join into one valid stream) once for every frame it goes in —
 * a publication reaching many sessions is compressed once, whatever else their frames
 * hold — and the brackets, commas and `tail` in stored blocks. Compresses less than the
 * whole frame would (no match across messages) for a fraction of the CPU.
 */
export function segmentedFrame(messages: readonly string[], tail: string | undefined): Buffer {
  const parts: Buffer[] = [OPEN_BRACKET];
  let length = OPEN_BRACKET.length + CLOSE_BRACKET.length;
  for (let i = 0; i < messages.length; i++) {
    const piece = segmentOf(messages[i] as string);
    if (i > 0) parts.push(COMMA);
    parts.push(piece);
    length += piece.length + (i > 0 ? COMMA.length : 0);
  }
  if (tail !== undefined) {
    const piece = storedSegment(Buffer.from(tail));
    parts.push(COMMA, piece);
    length += COMMA.length + piece.length;
  }
  parts.push(CLOSE_BRACKET);
  return deflatedTextFrame(Buffer.concat(parts, length));
}

const OPEN_BRACKET = storedSegment(Buffer.from('['));
const COMMA = storedSegment(Buffer.from(','));
/** `]`, then the header byte of the empty stored block whose other 4 bytes RFC 7692 leaves off. */
const CLOSE_BRACKET = Buffer.concat([storedSegment(Buffer.from(']')), Buffer.from([0])]);
/** Messages shorter than this go in stored blocks: deflating them would not pay. */
const MIN_DEFLATED = 64;
/** Bytes of pieces (and of the messages keying them) kept before the cache starts afresh. */
const SEGMENT_CACHE_BYTES = 4 * 1024 * 1024;
const segments = new Map<string, Buffer>();
let segmentBytes = 0;

/** The piece of `message`, deflated once while it is in the cache. */
function segmentOf(message: string): Buffer {
  let piece = segments.get(message);
  if (piece === undefined) {
    piece =
      message.length < MIN_DEFLATED ? storedSegment(Buffer.from(message)) : deflateRawSync(message, SEGMENT);
    if (segmentBytes > SEGMENT_CACHE_BYTES) {
      segments.clear();
      segmentBytes = 0;
    }
    segments.set(message, piece);
    segmentBytes += piece.length + message.length * 2;
  }
  return piece;
}

let lastPayload: Buffer | null = null;
let lastFrame: Buffer = Buffer.alloc(0);

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
