/**
 * The WebSocket transport: `ws` in `noServer` mode, upgrades routed through Fastify, one
 * `WebSocketLink` per socket. Each incoming frame is a JSON array of messages; outgoing
 * frames are written by the per-turn flusher. Socket events use module-level handlers,
 * not closures per socket.
 */
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { BROWSER_COOKIE, decodeBatch, formatError } from '@bayou/protocol';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import { createBatchContext } from '../bayeux/batch-context.js';
import { goBehind, type PipelineState } from '../bayeux/pipeline.js';
import { handOverClose, isRefused, refusalResponse } from '../http/connection-guard.js';
import type { ResolvedOptions } from '../options.js';
import type { Session } from '../session/session.js';
import { WEBSOCKET_CARRIER } from './carrier-kinds.js';
import { boundDeflateOffers, perMessageDeflate } from './compression.js';
import { CLOSES_PER_SWEEP, DeadlineQueue } from './deadline-queue.js';
import { readCookie } from './http-request.js';
import { OpenLinks } from './open-links.js';
import type { OriginGuard } from './origin-guard.js';
import { PingWheel } from './ping-wheel.js';
import { pathOf, requestInfo } from './request-info.js';
import { BATCH_DONE, BATCH_FAILED, runBatch } from './transport.js';
import type { TransportKernel } from './transport-kernel.js';
import { releaseInflater, releaseReceiveQueue, socketOf } from './ws-fast-path.js';
import { type LinkHost, type WebSocketLink, webSocketLinkClass } from './ws-link.js';

type WebSocketOptions = Pick<
  ResolvedOptions,
  | 'path'
  | 'allowedOrigins'
  | 'maxPayloadBytes'
  | 'maxBatchMessages'
  | 'authenticate'
  | 'handshakeTimeout'
  | 'maxConnections'
  | 'compression'
  | 'compressionThreshold'
  | 'heartbeatInterval'
  | 'maxBufferedBytes'
>;

/** Close code and reason of a WebSocket that completed no Bayeux handshake in time. */
export const HANDSHAKE_TIMEOUT_CLOSE = { code: 1008, reason: 'bayeux handshake timeout' } as const;

/** The close frame those sockets get, built once (RFC 6455 §5.5.1: code, then the reason). */
const HANDSHAKE_TIMEOUT_FRAME: Buffer = (() => {
  const reason = Buffer.from(HANDSHAKE_TIMEOUT_CLOSE.reason);
  const frame = Buffer.alloc(4 + reason.length);
  frame[0] = 0x88;
  frame[1] = 2 + reason.length;
  frame.writeUInt16BE(HANDSHAKE_TIMEOUT_CLOSE.code, 2);
  reason.copy(frame, 4);
  return frame;
})();

const UPGRADE = Symbol('bayou.upgrade');
type UpgradeRequest = IncomingMessage & { [UPGRADE]?: PendingUpgrade };
interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  res: ServerResponse;
}
/** The module-level handlers below run with `this` bound to the link. */
type SocketHandler = (this: WebSocket, ...args: unknown[]) => void;

export class WebSocketTransport {
  readonly wss: WebSocketServer;
  /** Sockets closed for completing no handshake within `handshakeTimeout`. */
  handshakeTimeouts = 0;
  /** Sockets of heartbeat sessions closed for sending nothing back between two heartbeats. */
  heartbeatTimeouts = 0;
  /** The links of heartbeat sessions, each visited once per `heartbeatInterval` (`null`: heartbeat off). */
  readonly pings: PingWheel<WebSocketLink> | null;
  private readonly host: LinkHost;
  /** Links still to complete a handshake, in the order they opened. */
  private readonly awaiting: DeadlineQueue<WebSocketLink> | null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.upgrade(req, socket, head);
  };

  constructor(
    private readonly app: FastifyInstance,
    kernel: TransportKernel,
    private readonly options: WebSocketOptions,
    private readonly origins: OriginGuard,
  ) {
    this.pings =
      options.heartbeatInterval > 0
        ? new PingWheel<WebSocketLink>(options.heartbeatInterval, (link) => this.heartbeat(link))
        : null;
    this.host = {
      kernel,
      maxBatchMessages: options.maxBatchMessages,
      keepHeaders: options.authenticate !== undefined,
      deflateThreshold: options.compressionThreshold,
      pings: this.pings,
      links: new OpenLinks<WebSocketLink>(),
      maxBufferedBytes: options.maxBufferedBytes,
    };
    this.wss = new WebSocketServer({
      WebSocket: webSocketLinkClass(this.host),
      noServer: true,
      // Both kept per socket by ws (a close listener for its client list, a pong callback),
      // both done here without a closure per socket: the open links, `WebSocketLink.pinged`.
      clientTracking: false,
      autoPong: false,
      maxPayload: options.maxPayloadBytes,
      perMessageDeflate: perMessageDeflate(options),
    });
    this.awaiting = options.handshakeTimeout > 0 ? new DeadlineQueue(options.handshakeTimeout) : null;
    app.server.on('upgrade', this.onUpgrade);
  }

  /**
   * Closes the sockets without a live Bayeux session: one that completed no handshake
   * within `handshakeTimeout` of opening, and one whose sessions all ended (a disconnect,
   * an expiry) and that handshook no new one within a further `handshakeTimeout`. Each
   * open socket is looked at once per `handshakeTimeout` (its ended sessions forgotten
   * then); a closed one gets one shared close frame (`1008`) and its socket is ended and
   * destroyed once that is out — no closing handshake waited for, no timer per socket.
   * Called by the plugin's connection sweep.
   */
  sweep(now: number): void {
    const awaiting = this.awaiting;
    awaiting?.expire(
      now,
      (link) => {
        if (link.readyState !== WebSocket.OPEN) return;
        if (link.idle()) {
          this.handshakeTimeouts++;
          const socket = socketOf(link);
          socket.write(HANDSHAKE_TIMEOUT_FRAME);
          socket.destroySoon();
          return;
        }
        awaiting.add(link, now);
      },
      CLOSES_PER_SWEEP,
    );
  }

  /**
   * The heartbeat wheel's visit of `link`: a ping and `[]`, or, when the client sent nothing
   * back since the last ones, the end of the socket (destroyed: a dead link would not read a
   * close frame), whose sessions then expire `maxInterval` later as after any close.
   */
  private heartbeat(link: WebSocketLink): boolean {
    if (link.readyState !== WebSocket.OPEN) return false;
    if (link.beat()) return true;
    this.heartbeatTimeouts++;
    link.terminate();
    return false;
  }

  get connections(): number {
    return this.host.links.size;
  }

  /**
   * An upgrade on our path goes through Fastify's router like any request, so the app's
   * hooks (authentication, rate limits) apply; `route()` then completes the handshake.
   */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (isRefused(socket)) {
      // Past maxConnections: a clear answer, then the connection goes.
      socket.end(refusalResponse(this.options.maxConnections));
      return;
    }
    if (pathOf(req.url) !== this.options.path) {
      // Leave other paths to other upgrade listeners; refuse only when we are alone.
      if (this.app.server.listenerCount('upgrade') === 1) rejectUpgrade(socket, 404, 'Not Found');
      return;
    }
    const res = new ServerResponse(req);
    (req as UpgradeRequest)[UPGRADE] = { socket, head, res };
    res.assignSocket(socket as Socket);
    // A hook or the route answered over HTTP instead of upgrading: end the socket.
    res.once('finish', onRefusedUpgrade);
    this.app.routing(req, res);
  }

  /** The GET route on the endpoint path; registered by the plugin in its own scope. */
  route(scope: FastifyInstance): void {
    scope.get(this.options.path, (request, reply) => {
      const pending = (request.raw as UpgradeRequest)[UPGRADE];
      if (pending === undefined) {
        reply.code(426).header('upgrade', 'websocket').send({ error: 'WebSocket upgrade expected' });
        return;
      }
      if (!this.origins.admitsUpgrade(request.headers.origin, request.headers.host)) {
        reply.code(403).send({ error: 'origin not allowed' });
        return;
      }
      reply.hijack();
      const raw = request.raw as UpgradeRequest;
      // Let go of the HTTP response: `ws` writes the 101 itself, and a response attached to
      // the socket would keep the request alive as long as the connection.
      pending.res.off('finish', onRefusedUpgrade);
      pending.res.detachSocket(pending.socket as Socket);
      raw[UPGRADE] = undefined;
      if (this.options.compression) boundDeflateOffers(raw.headers);
      this.wss.handleUpgrade(raw, pending.socket, pending.head, (ws) => {
        const link = ws as WebSocketLink;
        // The upgrade's BAYEUX_BROWSER cookie (a browser sends it): a session made on this
        // socket is bound to it, and one bound elsewhere is refused here without it.
        const browserId = readCookie(raw.headers.cookie, BROWSER_COOKIE);
        link.opened(requestInfo(WEBSOCKET_CARRIER, raw, request.ip, browserId, request.protocol === 'https'));
        link.on('message', onSocketMessage as SocketHandler);
        link.on('close', onSocketClose as SocketHandler);
        link.on('error', onSocketError as SocketHandler);
        link.on('ping', onSocketPing as SocketHandler);
        link.on('pong', onSocketPong as SocketHandler);
        // The guard counts the socket out when the link closes (one close listener on it: ws's).
        handOverClose(socketOf(link));
        this.host.links.add(link);
        this.awaiting?.add(link, Date.now());
      });
    });
  }

  /** Graceful shutdown: tell every socket to reconnect elsewhere. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.host.links) ws.close(code, reason);
  }

  async close(): Promise<void> {
    this.app.server.off('upgrade', this.onUpgrade);
    this.awaiting?.clear();
    this.pings?.clear();
    for (const ws of this.host.links) ws.terminate();
    await this.host.links.whenEmpty();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

function onRefusedUpgrade(this: ServerResponse): void {
  this.socket?.destroy();
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function onSocketMessage(this: WebSocketLink, data: Buffer, isBinary: boolean): void {
  if (this.deflates) releaseInflater(this);
  releaseReceiveQueue(this);
  const text = isBinary ? '' : data.toString('utf8');
  if (this.tail !== null && this.open === null) {
    const tail: Promise<void> = this.tail
      .then(() => {
        const frame = handleFrame(this, text, null);
        // The last frame queued, only awaiting acknowledgements: the next goes on behind it.
        if (frame?.ctx.draining && this.tail === tail) this.open = { answered: tail, ctx: frame.ctx };
        return frame?.answered;
      })
      .finally(() => {
        if (this.tail === tail) {
          this.tail = null;
          this.open = null;
        }
      });
    this.tail = tail;
    return;
  }
  // Nothing pending, or a frame that only awaits Redis's acknowledgements of its publishes:
  // this frame is handled now, its replies and anything that must wait chained behind it.
  const frame = handleFrame(this, text, this.open);
  if (frame === null) return;
  const tail: Promise<void> = frame.answered.finally(() => {
    if (this.tail === tail) {
      this.tail = null;
      this.open = null;
    }
  });
  this.tail = tail;
  this.open = frame.ctx.draining ? { answered: tail, ctx: frame.ctx } : null;
}

/** A frame still being answered, and its context. */
interface PendingFrame {
  answered: Promise<void>;
  ctx: PipelineState;
}

/** Runs a frame; `after` is the previous frame still being answered, which this one goes behind. */
function handleFrame(link: WebSocketLink, text: string, after: WebSocketLink['open']): PendingFrame | null {
  const { kernel, maxBatchMessages: max } = link.host;
  const decoded = decodeBatch(text);
  if (!decoded.ok || decoded.messages.length > max) {
    const args = decoded.ok ? ['batch', `max ${max}`] : [decoded.reason.replace(/[:,]/g, ' ')];
    const error = JSON.stringify([{ successful: false, error: formatError('messageInvalid', args) }]);
    if (after === null) {
      link.sendText(error);
      return null;
    }
    const answered = after.answered.then(() => {
      link.sendText(error);
    });
    return { answered, ctx: after.ctx };
  }
  const ctx = createBatchContext(link.request, link, null, link.request.browserId ?? null);
  if (after !== null) goBehind(ctx, after.ctx, after.answered);
  const outcome = runBatch(kernel, decoded.messages, ctx, text, 'websocket');
  if (outcome === BATCH_DONE) finishFrame(link, ctx.replies, ctx.bound);
  // A bug, not the client's fault: the frame gets an error, the socket and the process live on.
  else if (outcome === BATCH_FAILED) link.sendText(INTERNAL_ERROR_FRAME);
  // Failed later: what the batch did before failing is still answered.
  else return { answered: outcome.then(() => finishFrame(link, ctx.replies, ctx.bound)), ctx };
  return null;
}

const INTERNAL_ERROR_FRAME = JSON.stringify([{ successful: false, error: formatError('internalError') }]);

function finishFrame(link: WebSocketLink, replies: string[], bound: Session[]): void {
  link.track(bound);
  if (replies.length > 0) link.sendText(`[${replies.join(',')}]`);
}

function onSocketClose(this: WebSocketLink): void {
  this.closed();
}

function onSocketPing(this: WebSocketLink, data: Buffer): void {
  this.pinged(data);
}

/** A pong (a heartbeat's answer) was read: the chunk queue it grew is let go of, as after a message. */
function onSocketPong(this: WebSocketLink): void {
  releaseReceiveQueue(this);
}

function onSocketError(this: WebSocketLink, err: Error): void {
  // ws closes the socket itself (e.g. 1009 for an oversized frame); just record it.
  this.host.kernel.log.debug({ err }, 'websocket error');
}
