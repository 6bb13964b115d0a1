/**
 * The `eventsource` connection type, as Faye's browser client speaks it
 * (`src/transport/event_source.js`): after its handshake over long-polling the client
 * opens `GET <path>/<clientId>` with `Accept: text/event-stream` and reads `data: [<messages>]`
 * events (one per per-turn flush); every message it sends, `/meta/connect` included (with
 * `connectionType: "eventsource"`, answered at once), goes on ordinary POSTs. The stream
 * is recycled like a `streaming` one: the response ends and the browser's EventSource
 * reopens it after `retry` ms, the session keeping what was queued meanwhile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BROWSER_COOKIE, formatError, META_CONNECT } from '@bayou/protocol';
import type { FastifyInstance } from 'fastify';
import type { RequestInfo } from '../types.js';
import { EVENT_SOURCE_CARRIER } from './carrier-kinds.js';
import type { CompressionOptions } from './compression.js';
import { replyFor } from './http-compression.js';
import { FastifyHttpReply, type HttpReply, RawHttpReply } from './http-reply.js';
import { readCookie } from './http-request.js';
import { ORIGIN_REFUSED_BODY, type OriginGuard } from './origin-guard.js';
import { requestInfo } from './request-info.js';
import type { StreamHub } from './stream-hub.js';
import { EVENT_SOURCE_PADDING } from './stream-link.js';
import {
  type StreamingOptions,
  type StreamRelay,
  startRelay,
  startStream,
  streamTarget,
} from './streaming.js';
import type { TransportKernel } from './transport-kernel.js';

export const EVENT_SOURCE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

const NOT_AN_EVENT_SOURCE = JSON.stringify({
  error: 'GET <path>/<clientId> opens an EventSource stream: send Accept: text/event-stream',
});

export class EventSourceTransport {
  /** `relay` carries a stream of another node's session to its owner. */
  constructor(
    private readonly kernel: TransportKernel,
    private readonly hub: StreamHub,
    private readonly options: StreamingOptions & CompressionOptions,
    private readonly relay: StreamRelay,
    private readonly origins: OriginGuard,
  ) {}

  /** Registers `GET <path>/*` in the endpoint's scope. */
  routes(scope: FastifyInstance): void {
    scope.get(`${this.options.path.replace(/\/$/, '')}/*`, (req, reply) => {
      const gzipped = replyFor(new FastifyHttpReply(reply), req.headers['accept-encoding'], this.options);
      this.open(req.raw, gzipped, req.ip, req.protocol === 'https');
    });
  }

  /**
   * Bound: handed to `http/direct-endpoint.ts` as its `serveGet`, so that a stream's frames
   * go to the socket whole, chunk size and all, as `streaming`'s do on the direct path.
   */
  readonly serveDirect = (
    req: IncomingMessage,
    res: ServerResponse,
    ip: string | undefined,
    secure: boolean,
  ): void => {
    this.open(req, replyFor(new RawHttpReply(res), req.headers['accept-encoding'], this.options), ip, secure);
  };

  open(req: IncomingMessage, reply: HttpReply, ip: string | undefined, secure: boolean): void {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('text/event-stream')) {
      reply.send(406, NOT_AN_EVENT_SOURCE);
      return;
    }
    if (!this.origins.admit(req.headers, reply, 'eventsource')) {
      reply.send(403, ORIGIN_REFUSED_BODY);
      return;
    }
    const clientId = clientIdOf(req.url ?? '');
    const browserId = readCookie(req.headers.cookie, BROWSER_COOKIE);
    const info = requestInfo(EVENT_SOURCE_CARRIER, req, ip, browserId, secure);
    const target = streamTarget(this.kernel, clientId, EVENT_SOURCE_CARRIER);
    if (target instanceof Promise) void target.then((owner) => this.serve(reply, clientId, info, owner));
    else this.serve(reply, clientId, info, target);
  }

  /** Serves the stream of `clientId`: relayed to `owner`, or here (`null`). */
  private serve(reply: HttpReply, clientId: string, info: RequestInfo, owner: string | null): void {
    const browserId = info.browserId ?? null;
    const feed = owner === null ? null : this.relay(owner, clientId, info);
    const kind = EVENT_SOURCE_CARRIER;
    const link = startStream(reply, kind, this.hub, EVENT_SOURCE_HEADERS, EVENT_SOURCE_PADDING, feed);
    if (link === null || startRelay(link, this.hub, null)) return;
    const session = this.kernel.sessions.find(clientId);
    // Without trusting clientIds alone, a stream is the session's only from its own browser.
    if (
      session === undefined ||
      (!this.options.trustClientSession && session.browserId !== null && session.browserId !== browserId)
    ) {
      link.write(`data: [${unknownClient(clientId)}]\n\n`);
      link.end();
      return;
    }
    this.kernel.connects.bindStream(session, link);
    this.hub.attach(link, session);
  }
}

/** The last path segment: `/bayeux/<clientId>`. */
function clientIdOf(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A connect reply Faye follows: handshake again (it then opens a stream for its new clientId). */
export function unknownClient(clientId: string): string {
  return JSON.stringify({
    channel: META_CONNECT,
    clientId,
    successful: false,
    error: formatError('sessionUnknown'),
    advice: { reconnect: 'handshake', interval: 0 },
  });
}
