/**
 * The WebSocket transport: `ws` in `noServer` mode, upgrades routed through Fastify, one
 * `WebSocketLink` per socket. Each incoming frame is a JSON array of messages; outgoing
 * frames are written by the per-turn flusher. Socket events use module-level handlers,
 * not closures per socket.
 */
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { decodeBatch, formatError } from '@bayou/protocol';
import type { FastifyInstance } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';
import { createBatchContext } from '../bayeux/batch-context.js';
import type { Bayou } from '../bayou.js';
import type { RequestInfo, ResolvedOptions } from '../options.js';
import type { Session, SocketLink } from '../session/session.js';
import { originAllowed, pathOf, requestInfo } from './request-info.js';

const LINK = Symbol('bayou.link');
const UPGRADE = Symbol('bayou.upgrade');
type UpgradeRequest = IncomingMessage & { [UPGRADE]?: { socket: Duplex; head: Buffer } };
type LinkedSocket = WebSocket & { [LINK]?: WebSocketLink };

export class WebSocketLink implements SocketLink {
  readonly sessions: Session[] = [];
  tail: Promise<void> | null = null;
  constructor(
    readonly ws: WebSocket,
    readonly bayou: Bayou,
    readonly request: RequestInfo,
  ) {}
  send(frame: string): void {
    this.ws.send(frame);
  }
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }
  end(code: number, reason: string): void {
    this.ws.close(code, reason);
  }
}

export class WebSocketTransport {
  readonly wss: WebSocketServer;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.upgrade(req, socket, head);
  };

  constructor(
    private readonly app: FastifyInstance,
    private readonly bayou: Bayou,
    private readonly options: Pick<ResolvedOptions, 'path' | 'allowedOrigins' | 'maxPayloadBytes'>,
  ) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes,
      perMessageDeflate: false,
    });
    app.server.on('upgrade', this.onUpgrade);
  }

  get connections(): number {
    return this.wss.clients.size;
  }

  /**
   * An upgrade on our path goes through Fastify's router like any request, so the app's
   * hooks (authentication, rate limits) apply; `route()` then completes the handshake.
   */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (pathOf(req.url) !== this.options.path) {
      // Leave other paths to other upgrade listeners; refuse only when we are alone.
      if (this.app.server.listenerCount('upgrade') === 1) rejectUpgrade(socket, 404, 'Not Found');
      return;
    }
    (req as UpgradeRequest)[UPGRADE] = { socket, head };
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    // A hook or the route answered over HTTP instead of upgrading: end the socket.
    res.once('finish', () => socket.destroy());
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
      if (!originAllowed(this.options.allowedOrigins, request.headers.origin)) {
        reply.code(403).send({ error: 'origin not allowed' });
        return;
      }
      reply.hijack();
      const raw = request.raw;
      this.wss.handleUpgrade(raw, pending.socket, pending.head, (ws: LinkedSocket) => {
        ws[LINK] = new WebSocketLink(ws, this.bayou, requestInfo('websocket', raw));
        ws.on('message', onSocketMessage);
        ws.on('close', onSocketClose);
        ws.on('error', onSocketError);
      });
    });
  }

  /** Graceful shutdown: tell every socket to reconnect elsewhere. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.wss.clients) ws.close(code, reason);
  }

  async close(): Promise<void> {
    this.app.server.off('upgrade', this.onUpgrade);
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function onSocketMessage(this: LinkedSocket, data: Buffer, isBinary: boolean): void {
  const link = this[LINK];
  if (link === undefined) return;
  const text = isBinary ? '' : data.toString('utf8');
  if (link.tail !== null) {
    const tail: Promise<void> = link.tail.then(() => handleFrame(link, text));
    link.tail = tail.finally(() => {
      if (link.tail === tail) link.tail = null;
    });
    return;
  }
  const pending = handleFrame(link, text);
  if (pending !== undefined) {
    const tail: Promise<void> = pending.finally(() => {
      if (link.tail === tail) link.tail = null;
    });
    link.tail = tail;
  }
}

function handleFrame(link: WebSocketLink, text: string): void | Promise<void> {
  const decoded = decodeBatch(text);
  const max = link.bayou.options.maxBatchMessages;
  if (!decoded.ok || decoded.messages.length > max) {
    const args = decoded.ok ? ['batch', `max ${max}`] : [decoded.reason.replace(/[:,]/g, ' ')];
    link.send(JSON.stringify([{ successful: false, error: formatError('messageInvalid', args) }]));
    return;
  }
  const ctx = createBatchContext('websocket', link.request, link, null, null);
  const pending = link.bayou.handleBatch(decoded.messages, ctx, text.includes('__proto__'));
  if (pending !== undefined) return pending.then(() => finishFrame(link, ctx.replies, ctx.bound));
  finishFrame(link, ctx.replies, ctx.bound);
}

function finishFrame(link: WebSocketLink, replies: string[], bound: Session[]): void {
  for (const s of bound) if (!link.sessions.includes(s)) link.sessions.push(s);
  if (replies.length > 0 && link.ws.readyState === 1) link.send(`[${replies.join(',')}]`);
}

function onSocketClose(this: LinkedSocket): void {
  const link = this[LINK];
  if (link === undefined) return;
  for (const s of link.sessions) link.bayou.socketClosed(s, link);
  link.sessions.length = 0;
}

function onSocketError(this: LinkedSocket, err: Error): void {
  // ws closes the socket itself (e.g. 1009 for an oversized frame); just record it.
  this[LINK]?.bayou.log.debug({ err }, 'websocket error');
}
