/**
 * The WebSocket fast path's use of `ws` internals, kept in one place. A delivery is written
 * to the socket as one whole frame (`textFrame`) instead of through `ws`'s sender, which
 * would write header and payload apart: that needs the socket (`_socket`) and the knowledge
 * that the sender has nothing of its own waiting (`_sender._state`, `_sender._queue`), or a
 * frame written past it would overtake what it holds. `ws-fast-path.test.ts` checks these
 * fields still exist and mean that, so a `ws` upgrade that changes them fails there loudly.
 * The read side (`skipBarePongs`, `readIntoShared`) also uses Node's own socket fields for
 * `onread` (lib/net.js); `test/idle-link.test.ts` checks they are in use.
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/** The fields of `ws`'s `WebSocket` and `Sender` (lib/websocket.js, lib/sender.js) used here. */
export interface WsInternals {
  _socket: Socket;
  /** Node's EventEmitter: the listeners by event name, and how many names have some. */
  _events: Record<string, unknown>;
  _eventsCount: number;
  /** Negotiated extensions; `permessage-deflate`'s keeps its inflater in `_inflate`. */
  _extensions: { 'permessage-deflate'?: { _inflate: { close(): void } | null } };
  _receiver: {
    /** Chunks read from the socket and not yet parsed: pushed on, shifted off. */
    _buffers: Buffer[];
    /** The bytes in `_buffers`. */
    _bufferedBytes: number;
    /** `GET_INFO` (0) while it waits for the first bytes of a frame. */
    _state: number;
    /** The same object as the WebSocket's `_extensions`. */
    _extensions: object;
  };
  _sender: {
    /** The same object as the WebSocket's `_extensions`. */
    _extensions: object;
    /** `DEFAULT` (0) while the sender writes at once; else reading a Blob or deflating. */
    _state: number;
    /** Sends waiting for the sender to be back in `DEFAULT`. */
    _queue: unknown[];
  };
}

/** `ws`'s `DEFAULT` sender state (lib/sender.js): not busy. */
export const SENDER_IDLE = 0;

export function socketOf(ws: WebSocket): Socket {
  return (ws as unknown as WsInternals)._socket;
}

/**
 * Whether `ws`'s sender would write a frame at once: nothing queued behind a Blob being
 * read or a message being deflated. Only then may a frame go straight to the socket.
 */
export function senderIdle(ws: WebSocket): boolean {
  const sender = (ws as unknown as WsInternals)._sender;
  return sender._state === SENDER_IDLE && sender._queue.length === 0;
}

/**
 * An unmasked, final text frame (RFC 6455 §5.2) holding `payload` (`length` bytes; a string
 * is encoded as UTF-8), in one buffer.
 */
export function textFrame(payload: Buffer | string, length = Buffer.byteLength(payload)): Buffer {
  return finalFrame(0x81, payload, length);
}

/**
 * A final, unmasked frame whose first byte is `first` (FIN, RSV1 for a compressed payload,
 * the opcode), holding `payload` in one buffer.
 */
export function finalFrame(
  first: number,
  payload: Buffer | string,
  length = Buffer.byteLength(payload),
): Buffer {
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = first;
  if (length < 126) frame[1] = length;
  else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  if (typeof payload === 'string') frame.write(payload, headerLength, length, 'utf8');
  else payload.copy(frame, headerLength);
  return frame;
}

/**
 * Lets go of the inflater `ws` made for the message just received (it would keep it as long
 * as the socket): with no client context takeover the next message needs none of its state,
 * and `ws` makes a new one for it. Called from the `message` handler, when `ws` is done with
 * it (`permessage-deflate.js` hands the message over last).
 */
export function releaseInflater(ws: WebSocket): void {
  const deflate = (ws as unknown as WsInternals)._extensions['permessage-deflate'];
  if (deflate?._inflate) {
    deflate._inflate.close();
    deflate._inflate = null;
  }
}

/**
 * Gives the receiver a fresh, empty chunk queue when the one it has is empty (called from
 * the `message` and `pong` handlers: a heartbeat session's socket reads a pong every
 * heartbeat, and nothing else while idle). `ws` pushes every chunk read from the socket on one array and
 * shifts it off: after the first message its backing store has room for 17 chunks
 * (152 bytes) and keeps it for the life of the socket, an idle one included; an empty
 * array holds no backing store. Only an empty queue is replaced: nothing read is ever
 * dropped, and the receiver reads the field afresh for every chunk.
 */
export function releaseReceiveQueue(ws: WebSocket): void {
  const receiver = (ws as unknown as WsInternals)._receiver;
  if (receiver._buffers.length === 0) receiver._buffers = [];
}

/**
 * Drops the peer address a `net.Socket` caches (`_peername`, an object of address, family
 * and port, made the first time `remoteAddress` is read); Node makes it again from the
 * handle when it is next read, and keeps `{}` once the handle is gone as it does anyway.
 */
export function forgetPeerAddress(socket: Socket): void {
  const cached = socket as unknown as { _peername?: unknown };
  if (cached._peername !== undefined) cached._peername = undefined;
}

/**
 * A link's listener map: a field for each event the transport listens to on every link
 * (`websocket.ts`), `undefined` while it has no listener. Node's EventEmitter starts one as
 * a null-prototype object, which V8 keeps in dictionary mode (184 bytes for the
 * transport's few listeners); an object with the names in its own fields from the start
 * stays a fast object of 64 bytes, as Node's own streams shape theirs (`Readable`'s
 * `_events`). Its prototype has no properties at all, so an event name never finds one of
 * `Object.prototype`; EventEmitter reads an `undefined` field as no listener.
 */
class LinkListeners {
  message = undefined;
  close = undefined;
  error = undefined;
  ping = undefined;
  pong = undefined;
}
Object.setPrototypeOf(LinkListeners.prototype, null);
Reflect.deleteProperty(LinkListeners.prototype, 'constructor');

/** The events a link's listener map has fields for. */
export const LINK_EVENTS: readonly string[] = Object.freeze(Object.keys(new LinkListeners()));

/** Gives a new `ws` WebSocket (no listener on it yet) the shaped listener map. */
export function shapeListeners(ws: WebSocket): void {
  const internals = ws as unknown as WsInternals;
  if (internals._eventsCount === 0)
    internals._events = new LinkListeners() as unknown as Record<string, unknown>;
}

/** The extensions of every socket that negotiated none: one object for all of them. */
const NO_EXTENSIONS: WsInternals['_extensions'] = Object.freeze({});

/**
 * Lets a socket that negotiated no extension share one empty, frozen extensions object:
 * `ws` gives each socket its own (56 bytes), held by the WebSocket, its receiver and its
 * sender, and only reads it once the upgrade is done (whether `permessage-deflate` is in it).
 */
export function shareNoExtensions(ws: WebSocket): void {
  const internals = ws as unknown as WsInternals;
  if (Object.keys(internals._extensions).length > 0) return;
  internals._extensions = NO_EXTENSIONS;
  internals._receiver._extensions = NO_EXTENSIONS;
  internals._sender._extensions = NO_EXTENSIONS;
}

/** `ws`'s receiver state `GET_INFO` (lib/receiver.js): waiting for a frame's first bytes. */
export const RECEIVER_AT_FRAME_START = 0;

/** The socket's `data` listener `ws` adds (lib/websocket.js `socketOnData`), once seen. */
let wsOnData: ((this: Socket, chunk: Buffer) => void) | null = null;
/** The symbol under which `ws` keeps a socket's WebSocket on it (`kWebSocket`), once seen. */
let wsOfSocket: symbol | null = null;

/**
 * A read from a link's socket: a chunk that is one empty pong and nothing else — all an idle
 * heartbeat socket reads — is dropped here when `ws`'s receiver waits for a new frame with
 * nothing buffered; anything else goes to `ws`'s own listener. `ws` would push the chunk on
 * its receiver (a `Writable`: its write bookkeeping, a `nextTick`), cut a header and a mask
 * buffer out of it and emit `pong`, which nothing but the transport listens to, and only to
 * let go of the queue the chunk grew. The heartbeat counts the bytes read (`bytesRead`), not
 * the pongs, so dropping it changes nothing. Carries `listener`, as a `once` wrapper does, so
 * `ws`'s `removeListener('data', socketOnData)` (on a close frame, an error, the close) takes
 * this one off just the same.
 */
function onLinkData(this: Socket, chunk: Buffer): void {
  if (!isBarePong(this, chunk, chunk.length))
    (wsOnData as (this: Socket, chunk: Buffer) => void).call(this, chunk);
}

/** Whether the `length` bytes read into `chunk` are one empty pong that `ws` need not see. */
function isBarePong(socket: Socket, chunk: Buffer, length: number): boolean {
  if (length !== 6 || chunk[0] !== 0x8a || chunk[1] !== 0x80 || wsOfSocket === null) return false;
  const ws = (socket as unknown as Record<symbol, WsInternals | undefined>)[wsOfSocket];
  const receiver = ws?._receiver;
  return receiver?._state === RECEIVER_AT_FRAME_START && receiver._bufferedBytes === 0;
}

/**
 * Puts `onLinkData` in the place of `ws`'s `data` listener on a new link's socket (its only
 * one), swapped in the listener map so the stream's flowing state is untouched. The first
 * link tells which function and symbol `ws` uses; a socket whose listener is anything else
 * (another copy of `ws`, a listener more) keeps its own.
 */
export function skipBarePongs(ws: WebSocket): void {
  const socket = socketOf(ws);
  const events = (socket as unknown as WsInternals)._events;
  const listener = events.data;
  if (typeof listener !== 'function') return;
  if (wsOnData === null) {
    const symbol = Object.getOwnPropertySymbols(socket).find(
      (s) => s.description === 'websocket' && (socket as unknown as Record<symbol, unknown>)[s] === ws,
    );
    if (symbol === undefined) return;
    wsOfSocket = symbol;
    wsOnData = listener as (this: Socket, chunk: Buffer) => void;
    (onLinkData as unknown as { listener: unknown }).listener = listener;
  }
  if (listener === wsOnData && (socket as unknown as Record<symbol, unknown>)[wsOfSocket as symbol] === ws)
    events.data = onLinkData;
}

/**
 * One buffer every link's socket reads into (`readIntoShared`), as large as the one Node
 * reads each chunk into (64 KiB): a read is over before the next begins, and what is kept
 * of it is copied out first.
 */
const SHARED_READS = Buffer.allocUnsafeSlow(64 * 1024);

/** Node's fields (lib/net.js) for a socket that reads into a buffer of its own (`onread`). */
let ownReadBuffer: { buffer: symbol; callback: symbol } | null | undefined;

/**
 * Lets a link's socket read into `SHARED_READS`, as Node's `onread` option does for a
 * socket it connects: Node would otherwise allocate a 64 KiB buffer for every read, trim
 * it, wrap it in an `ArrayBuffer` and a `Buffer`, and push it through the socket's
 * `Readable`, which schedules a `nextTick` (and with it a round of Node's promise
 * bookkeeping) — per pong, on a heartbeat socket, about 0.6 KB of garbage. Here a pong read
 * alone is dropped (`isBarePong`) at no cost at all, and any other read is copied out of
 * the shared buffer into one of its own length and pushed through the `Readable` as Node
 * pushes it, so `ws` and everything after it see the same chunks. Only a plain TCP socket
 * (a TLS socket's reads are its decrypted stream's) and a Node whose sockets have these
 * fields (`ws-fast-path.test.ts` checks them); returns whether it switched.
 */
export function readIntoShared(ws: WebSocket): boolean {
  const socket = socketOf(ws) as Socket & { _handle: { useUserBuffer?: (b: Buffer) => void } | null };
  const handle = socket._handle;
  if (handle === null || typeof handle.useUserBuffer !== 'function' || 'encrypted' in socket) return false;
  const fields = socket as unknown as Record<symbol, unknown>;
  if (ownReadBuffer === undefined) {
    const named = (name: string) =>
      Object.getOwnPropertySymbols(socket).find((s) => s.description === name && fields[s] === null);
    const buffer = named('kBuffer');
    const callback = named('kBufferCb');
    ownReadBuffer = buffer && callback ? { buffer, callback } : null;
  }
  if (ownReadBuffer === null || fields[ownReadBuffer.buffer] !== null) return false;
  fields[ownReadBuffer.buffer] = SHARED_READS;
  fields[ownReadBuffer.callback] = onSharedRead;
  handle.useUserBuffer(SHARED_READS);
  return true;
}

/** `nread` bytes read into `SHARED_READS`: what a socket pushes on reading them (`false`: stop reading for now). */
function onSharedRead(this: Socket, nread: number, buffer: Buffer): boolean {
  if (isBarePong(this, buffer, nread)) return true;
  const chunk = Buffer.allocUnsafeSlow(nread);
  buffer.copy(chunk, 0, 0, nread);
  return this.push(chunk);
}
