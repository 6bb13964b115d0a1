/**
 * One WebSocket as the session sees its carrier: a `ws` WebSocket carrying Bayou's
 * per-connection state in its own fields, so an idle connection costs one object beyond
 * what `ws` allocates anyway. What every link of one server shares (`LinkHost`) is given
 * to its class (`webSocketLinkClass`), so `ws` constructs each link with it; the link's
 * own state changes only through its methods.
 */

import { WebSocket } from 'ws';
import type { PipelineState } from '../bayeux/pipeline.js';
import { guardedClosed } from '../http/connection-guard.js';
import type { Carrier } from '../session/carrier.js';
import type { Session } from '../session/session.js';
import type { CarrierKind, RequestInfo } from '../types.js';
import { WEBSOCKET_CARRIER } from './carrier-kinds.js';
import { compressedFrame, compressedFrameOfParts } from './compression.js';
import type { OpenLinks } from './open-links.js';
import type { PingWheel } from './ping-wheel.js';
import { keepAfterHandshake } from './request-info.js';
import type { TransportKernel } from './transport-kernel.js';
import {
  forgetPeerAddress,
  readIntoShared,
  senderIdle,
  shapeListeners,
  shareNoExtensions,
  skipBarePongs,
  socketOf,
  textFrame,
} from './ws-fast-path.js';

/** What every link of one server shares: the kernel and the limits. */
export interface LinkHost {
  readonly kernel: TransportKernel;
  readonly maxBatchMessages: number;
  /** Whether later handshakes on a socket need its request headers (`authenticate` reads them). */
  readonly keepHeaders: boolean;
  /** Payloads of at least this many bytes are compressed on sockets that negotiated it. */
  readonly deflateThreshold: number;
  /** The heartbeat wheel of links carrying a heartbeat session (`null`: heartbeat off). */
  readonly pings: PingWheel<WebSocketLink> | null;
  /** The server's open links; a link leaves it when it closes. */
  readonly links: OpenLinks<WebSocketLink>;
  /** Past this many bytes unsent on its socket, a link's client is a slow consumer (`maxBufferedBytes`). */
  readonly maxBufferedBytes: number;
}

const NO_SESSIONS: readonly Session[] = Object.freeze([]);

/** A link's request before its upgrade is known, and once trimmed away. */
const NO_REQUEST: RequestInfo = Object.freeze({
  transport: WEBSOCKET_CARRIER.name,
  carrier: WEBSOCKET_CARRIER,
  headers: {},
  url: '',
  remoteAddress: undefined,
});

/** Uncompressed: `ws` would otherwise keep a compressor for the socket. */
const AS_TEXT = Object.freeze({ binary: false, compress: false });

/**
 * One heartbeat, in one write: a ping with no payload (`0x89 0x00`, unmasked as a server's
 * frames are), then a text frame holding an empty Bayeux array, `[]`, which the client's
 * code sees (a browser answers the ping without telling it).
 */
const HEARTBEAT = Buffer.from([0x89, 0x00, 0x81, 0x02, 0x5b, 0x5d]);
const EMPTY_BATCH = '[]';

let lastPayload: Buffer | null = null;
let lastFrame: Buffer = Buffer.alloc(0);

/** The link class `ws` constructs for one server's sockets: each link has `host` from birth. */
export function webSocketLinkClass(host: LinkHost): typeof WebSocket {
  return class extends WebSocketLink {
    override get host(): LinkHost {
      return host;
    }
  };
}

export abstract class WebSocketLink extends WebSocket implements Carrier {
  abstract get host(): LinkHost;
  private summary: RequestInfo = NO_REQUEST;
  /** The client's IP once `request` is trimmed away (the socket holds the string anyway). */
  private ip: string | undefined = undefined;
  private secure = false;
  /**
   * Its sessions: the one most links carry, in the field itself (an array of one cost 56
   * bytes a link), an array once a second joins, `null` for none.
   */
  private bound: Session | readonly Session[] | null = null;
  /** Whether `request` was already cut down to what later handshakes may need. */
  private trimmed = false;
  /** Found without a live session at the last handshake-timeout check (it had one before). */
  private sessionless = false;
  /** The frames still being answered, in order: the next frame waits for them… */
  tail: Promise<void> | null = null;
  /** …unless the last one only awaits its publishes' acknowledgements: then the next goes on behind it. */
  open: { answered: Promise<void>; ctx: PipelineState } | null = null;
  /** Whether the client negotiated `permessage-deflate`. */
  private deflate = false;
  /** Its place on the heartbeat wheel (`-1`: not on it); written by the wheel. */
  wheelSpot = -1;
  /** The socket's `bytesRead` at the last heartbeat (`-1`: none sent yet). */
  private heardAt = -1;

  /** What the kernel knows of it: its kind's capabilities (on the prototype: nothing per link). */
  get kind(): CarrierKind {
    return WEBSOCKET_CARRIER;
  }

  /** The sessions it carries (ended ones are forgotten at the handshake-timeout check). */
  get sessions(): readonly Session[] {
    const bound = this.bound;
    return bound === null ? NO_SESSIONS : isMany(bound) ? bound : [bound];
  }

  /**
   * The upgrade completed, before the transport listens to it: what hooks see of its
   * request, and whether it deflates.
   */
  opened(request: RequestInfo): void {
    shapeListeners(this);
    skipBarePongs(this);
    readIntoShared(this);
    this.summary = request;
    this.deflate = this.extensions !== '';
    if (!this.deflate) shareNoExtensions(this);
  }

  get deflates(): boolean {
    return this.deflate;
  }

  /** Frames the same for many sockets are compressed once for all of them (see `Carrier`). */
  get compressesShared(): boolean {
    return this.deflate;
  }

  /** The request summary for hooks and limits (rebuilt for the rare frame after trimming). */
  get request(): RequestInfo {
    if (this.summary !== NO_REQUEST || this.ip === undefined) return this.summary;
    return { ...NO_REQUEST, ip: this.ip, secure: this.secure };
  }

  /** A batch bound `sessions` to it: tracked; the request trimmed after the first. */
  track(sessions: readonly Session[]): void {
    for (const s of sessions) {
      const bound = this.bound;
      if (bound === null) this.bound = s;
      else if (!isMany(bound)) {
        if (bound !== s) this.bound = [bound, s];
      } else if (!bound.includes(s)) this.bound = [...bound, s];
    }
    const pings = this.host.pings;
    if (pings !== null && this.wheelSpot === -1 && sessions.some((s) => s.heartbeat)) pings.add(this);
    if (sessions.length > 0 && !this.trimmed) {
      // Only `authenticate` reads the headers, for later handshakes on this socket; the
      // limits need the client's IP.
      if (this.host.keepHeaders) this.summary = keepAfterHandshake(this.summary);
      else {
        // No object per idle connection: the IP is kept in a field, the request summary
        // rebuilt for the (rare) later frames that need one.
        this.ip = this.summary.ip;
        this.secure = this.summary.secure === true;
        this.summary = NO_REQUEST;
      }
      // The socket cached its peer's address as an object when the upgrade's IP was read
      // (56 bytes for as long as it lives); the IP is kept above, and Node reads the
      // address again should anything ask.
      forgetPeerAddress(socketOf(this));
      this.trimmed = true;
    }
  }

  /**
   * The handshake-timeout check: whether to close it now — no live session, and none since
   * the last check either (or none ever). Forgets the sessions that ended or moved to
   * another carrier (so a socket that handshakes again and again does not collect them).
   */
  idle(): boolean {
    if (this.keepLiveSessions()) this.sessionless = false;
    else if (this.trimmed && !this.sessionless) this.sessionless = true;
    else return true;
    return false;
  }

  /**
   * The socket closed: counted out by the connection guard (`handOverClose`), its sessions
   * let go of it, the heartbeat wheel and the open links too.
   */
  closed(): void {
    guardedClosed(socketOf(this));
    this.host.links.delete(this);
    this.host.pings?.remove(this);
    const bound = this.bound;
    this.bound = null;
    if (bound === null) return;
    if (!isMany(bound)) this.host.kernel.connects.carrierClosed(bound, this);
    else for (const s of bound) this.host.kernel.connects.carrierClosed(s, this);
  }

  /**
   * One heartbeat (the wheel's visit): `false` when the client sent nothing at all since the
   * last one — not even the pong every WebSocket client answers a ping with — so the link is
   * dead. Else a ping and `[]` go out. Any byte received counts, so nothing per pong is
   * listened to: a pong read alone is dropped as it is read (`skipBarePongs`), one read
   * with more is dropped by `ws`, neither reaching the Bayeux layer.
   */
  beat(): boolean {
    const socket = socketOf(this);
    const read = socket.bytesRead;
    if (read === this.heardAt) return false;
    this.heardAt = read;
    if (senderIdle(this)) socket.write(HEARTBEAT);
    else {
      this.ping();
      this.send(EMPTY_BATCH, AS_TEXT);
    }
    return true;
  }

  /**
   * A ping from the client, answered with a pong of its payload as `ws` would (its
   * `autoPong`, which is off: it kept a callback closure per socket). A client that pings
   * but does not read what it is sent is a slow consumer: once more than
   * `maxBufferedBytes` wait unsent on its socket, a ping ends the link instead (`ws` ended
   * it at 60 unsent pongs).
   */
  pinged(data: Buffer): void {
    if (this.readyState !== WebSocket.OPEN) return;
    if (this.bufferedAmount > this.host.maxBufferedBytes) this.terminate();
    else this.pong(data, false);
  }

  end(code: number, reason: string): void {
    this.close(code, reason);
  }

  /**
   * Writes `data` as one text frame with one `write` to the socket. `ws` would write a
   * header and the payload as two buffers (a corked `writev`); asked not to compress, its
   * sender writes at once, so writing the frame whole is what it would send, at
   * less cost per frame. Should the sender hold something (see `ws-fast-path.ts`), the frame
   * goes through `ws.send`, behind it. A payload sent to many sockets in a row (one
   * publication reaching sessions alone in a turn) is framed once; a text is encoded
   * straight into its frame. On a socket that negotiated `permessage-deflate`, a payload
   * past the threshold is compressed here, once for all the sockets it goes to
   * (`compression.ts`), never by a compressor of the socket's own.
   */
  /** Answers the connect held on it: one frame of `messages`. */
  answer(messages: string[]): number {
    return this.sendText(`[${messages.join(',')}]`);
  }

  sendText(data: Buffer | string): number {
    const length = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    if (this.readyState !== WebSocket.OPEN) return length;
    if (!senderIdle(this)) return this.sendBehind(data, length);
    let frame: Buffer;
    if (this.deflate && length >= this.host.deflateThreshold) frame = compressedFrame(data);
    else if (typeof data === 'string') frame = textFrame(data, length);
    else {
      if (data !== lastPayload) {
        lastPayload = data;
        lastFrame = textFrame(data, length);
      }
      frame = lastFrame;
    }
    socketOf(this).write(frame);
    return length;
  }

  /**
   * One text frame of `head` (shared by many sockets in a row) and `tail` (this socket's):
   * past the threshold, `head` is compressed once for all of them and `tail` follows it
   * uncompressed in the same message (`compression.ts`).
   */
  sendParts(head: Buffer, tail: string, _messages: number): number {
    const length = head.length + Buffer.byteLength(tail);
    if (this.readyState !== WebSocket.OPEN) return length;
    if (!this.deflate || length < this.host.deflateThreshold || !senderIdle(this))
      return this.sendText(Buffer.concat([head, Buffer.from(tail)]));
    socketOf(this).write(compressedFrameOfParts(head, tail));
    return length;
  }

  /** Through `ws`'s sender, queued behind what it holds. */
  private sendBehind(data: Buffer | string, length: number): number {
    this.send(data, AS_TEXT);
    return length;
  }

  private keepLiveSessions(): boolean {
    const bound = this.bound;
    if (bound === null) return false;
    if (!isMany(bound)) {
      if (livesOn(bound, this)) return true;
      this.bound = null;
      return false;
    }
    const live = bound.filter((s) => livesOn(s, this));
    if (live.length < bound.length)
      this.bound = live.length === 0 ? null : live.length === 1 ? (live[0] as Session) : live;
    return live.length > 0;
  }
}

/** Whether a link's `bound` holds several sessions (an array) rather than one. */
const isMany = (bound: Session | readonly Session[]): bound is readonly Session[] => Array.isArray(bound);

/** Whether `session` lives on `link`: not ended, and not moved to another carrier since. */
const livesOn = (session: Session, link: WebSocketLink): boolean =>
  session.state !== 'removed' && session.carrier === link;
