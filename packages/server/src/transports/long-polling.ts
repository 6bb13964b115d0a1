/**
 * The long-polling transport: `POST <path>` with a JSON array (or a form-encoded
 * `message=`) in an encapsulated Fastify scope, so its body parsers do not leak into the
 * host application. A `/meta/connect` in the batch may hold the response; it is then
 * answered by the flusher or the sweep through `LongPollExchange.respond`.
 *
 * A batch naming a session of another live node is forwarded to that node through the
 * engine's session directory, and its reply relayed: no sticky sessions are needed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeBatch, formatError } from '@bayou/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createBatchContext } from '../bayeux/batch-context.js';
import type { ForwardRequest, ForwardResponse } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';
import { RandomIds } from '../random-ids.js';
import type { Session } from '../session/session.js';
import type { PendingPoll } from '../session/session-lifecycle.js';
import type { RequestInfo } from '../types.js';
import { corsFor, requestInfo } from './request-info.js';
import type { TransportKernel } from './transport-kernel.js';

const BROWSER_COOKIE = 'BAYEUX_BROWSER';
const EXCHANGE = Symbol('bayou.exchange');
type TaggedResponse = ServerResponse & { [EXCHANGE]?: LongPollExchange };

type LongPollOptions = Pick<
  ResolvedOptions,
  'path' | 'allowedOrigins' | 'maxPayloadBytes' | 'maxBatchMessages'
>;

type Send = (status: number, body: string) => void;

export class LongPollExchange implements PendingPoll {
  readonly replies: string[] = [];
  done = false;
  session: Session | null = null;

  constructor(
    private readonly send: Send,
    readonly kernel: TransportKernel,
  ) {}

  respond(messages: string[]): void {
    if (this.done) return;
    this.done = true;
    const all = this.replies.length > 0 ? this.replies.concat(messages) : messages;
    const body = `[${all.join(',')}]`;
    this.kernel.outbound.countResponse(all.length, Buffer.byteLength(body));
    this.send(200, body);
  }

  fail(status: number, error: string): void {
    if (this.done) return;
    this.done = true;
    this.send(status, JSON.stringify({ error }));
  }

  /** Watches for the client going away while the connect is held. */
  hold(session: Session, raw: ServerResponse | null): void {
    this.session = session;
    if (raw === null) return;
    (raw as TaggedResponse)[EXCHANGE] = this;
    raw.once('close', onPollClosed);
  }
}

function onPollClosed(this: TaggedResponse): void {
  const exchange = this[EXCHANGE];
  if (exchange === undefined || exchange.done || exchange.session === null) return;
  // Queued messages stay with the session for its next connect.
  exchange.done = true;
  exchange.kernel.connects.pollAborted(exchange.session, exchange);
}

function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/**
 * Sets the CORS headers `corsFor` grants (none for no-Origin and same-origin requests,
 * credentials only for listed origins) and says whether to serve the request.
 */
function applyCors(req: FastifyRequest, reply: FastifyReply, allowed: readonly string[]): boolean {
  const answer = corsFor(allowed, req.headers.origin, req.headers.host);
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
  return answer.allowed;
}

/** Bytes of an oversized body read (and dropped) after the 413, before the socket is cut. */
const DRAIN_BYTES = 1024 * 1024;
/** ms an oversized body may take to finish arriving after the 413. */
const DRAIN_MS = 5000;

/**
 * After answering an oversized body, reads the rest of it so the client — still writing —
 * gets to read the 413 instead of a connection reset; past `DRAIN_BYTES` or `DRAIN_MS`
 * the socket is closed.
 */
function drainRequest(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  let left = DRAIN_BYTES;
  const cut = (): void => {
    clearTimeout(timer);
    raw.socket?.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

export function longPollingRoutes(kernel: TransportKernel, options: LongPollOptions) {
  kernel.forwardHandler = (request) => runForwarded(kernel, options, request);
  const browserIds = new RandomIds(12);
  return async function routes(scope: FastifyInstance): Promise<void> {
    scope.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
        // The answer goes out first; the rest of the body is then read within a bound.
        reply.code(413).send({
          error: formatError('messageTooLarge', [options.maxPayloadBytes]),
          message: `request body larger than ${options.maxPayloadBytes} bytes`,
        });
        drainRequest(req.raw);
        return;
      }
      const status = err.statusCode !== undefined && err.statusCode >= 400 ? err.statusCode : 500;
      if (status >= 500) kernel.log.error({ err }, 'long-poll request failed');
      reply.code(status).send({ error: status >= 500 ? 'internal error' : err.message });
    });
    scope.removeContentTypeParser(['application/json', 'text/plain']);
    const asText = { parseAs: 'string' as const, bodyLimit: options.maxPayloadBytes };
    scope.addContentTypeParser(['application/json', 'text/plain'], asText, (_req, body, done) =>
      done(null, body),
    );
    scope.addContentTypeParser('application/x-www-form-urlencoded', asText, (_req, body, done) => {
      done(null, new URLSearchParams(body as unknown as string).get('message') ?? '');
    });
    // CometD's client appends the message type to the URL (`/bayeux/connect`) by default.
    for (const url of [options.path, `${options.path.replace(/\/$/, '')}/*`]) {
      scope.options(url, (req, reply) => preflight(options, req, reply));
      scope.post(url, { bodyLimit: options.maxPayloadBytes }, (req, reply) => {
        if (!applyCors(req, reply, options.allowedOrigins)) {
          reply.code(403).send({ error: 'origin not allowed' });
          return;
        }
        handlePoll(kernel, options, browserIds, req, reply);
      });
    }
  };
}

function preflight(options: LongPollOptions, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!applyCors(req, reply, options.allowedOrigins))
    return reply.code(403).send({ error: 'origin not allowed' });
  reply.header('access-control-allow-methods', 'POST, OPTIONS');
  reply.header(
    'access-control-allow-headers',
    req.headers['access-control-request-headers'] ?? 'content-type',
  );
  reply.header('access-control-max-age', '86400');
  return reply.code(204).send();
}

function sendVia(reply: FastifyReply): Send {
  return (status, body) => {
    reply.code(status).header('content-type', 'application/json;charset=utf-8').send(body);
  };
}

function handlePoll(
  kernel: TransportKernel,
  options: LongPollOptions,
  browserIds: RandomIds,
  req: FastifyRequest,
  reply: FastifyReply,
): void {
  const text = typeof req.body === 'string' ? req.body : '';
  const decoded = decodeBatch(text);
  if (!decoded.ok) {
    reply.code(400).send({ error: decoded.reason });
    return;
  }
  if (decoded.messages.length > options.maxBatchMessages) {
    reply.code(400).send({ error: `too many messages in one request (max ${options.maxBatchMessages})` });
    return;
  }
  let browserId = readCookie(req.headers.cookie, BROWSER_COOKIE);
  const secure = req.protocol === 'https';
  if (browserId === null) {
    browserId = browserIds.next();
    reply.header(
      'set-cookie',
      `${BROWSER_COOKIE}=${browserId}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    );
  }
  const info = requestInfo('long-polling', req.raw, req.ip, browserId, secure);
  const owner = kernel.ownedElsewhere((decoded.messages[0] as { clientId?: unknown } | null)?.clientId);
  if (owner !== null) {
    void forwardPoll(kernel, owner, { text, messages: decoded.messages, info, browserId }, reply);
    return;
  }
  runPoll(kernel, decoded.messages, text, info, browserId, sendVia(reply), reply.raw);
}

interface Incoming {
  text: string;
  messages: unknown[];
  info: RequestInfo;
  browserId: string;
}

/** Hands the batch to the node owning its session; a dead owner's sessions are unknown here. */
async function forwardPoll(
  kernel: TransportKernel,
  owner: string,
  poll: Incoming,
  reply: FastifyReply,
): Promise<void> {
  const local = (): void =>
    runPoll(kernel, poll.messages, poll.text, poll.info, poll.browserId, sendVia(reply), reply.raw);
  try {
    if (!(await kernel.isAlive(owner))) return local();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(poll.info.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await kernel.forward(owner, {
      body: poll.text,
      transport: 'long-polling',
      url: poll.info.url,
      headers,
      // The client's IP as this node saw it (trustProxy applied), for the owner's limits.
      remoteAddress: poll.info.ip ?? poll.info.remoteAddress,
      browserId: poll.browserId,
    });
    sendVia(reply)(answer.status, answer.body);
  } catch (err) {
    kernel.log.warn({ err, owner }, 'forwarding a long-poll failed; answering here');
    if (!reply.sent) local();
  }
}

/** Runs a batch another node forwarded, as if its request had arrived here. */
function runForwarded(
  kernel: TransportKernel,
  options: LongPollOptions,
  request: ForwardRequest,
): Promise<ForwardResponse> {
  return new Promise((resolve) => {
    const decoded = decodeBatch(request.body);
    if (!decoded.ok || decoded.messages.length > options.maxBatchMessages) {
      resolve({ status: 400, body: JSON.stringify({ error: 'invalid batch' }) });
      return;
    }
    const info: RequestInfo = {
      transport: 'long-polling',
      headers: request.headers,
      url: request.url,
      remoteAddress: request.remoteAddress,
      ip: request.remoteAddress,
      browserId: request.browserId,
    };
    const send: Send = (status, body) => resolve({ status, body });
    runPoll(kernel, decoded.messages, request.body, info, request.browserId, send, null);
  });
}

function runPoll(
  kernel: TransportKernel,
  messages: unknown[],
  text: string,
  info: RequestInfo,
  browserId: string | null,
  send: Send,
  raw: ServerResponse | null,
): void {
  const exchange = new LongPollExchange(send, kernel);
  // Handlers write into the exchange's replies, so a held connect answers with them.
  const ctx = createBatchContext('long-polling', info, null, exchange, browserId, exchange.replies);
  const finish = (): void => {
    if (ctx.held && ctx.session?.held?.poll === exchange) exchange.hold(ctx.session, raw);
    // Queued deliveries ride along, unless they travel only in connect replies.
    else if (!ctx.held)
      exchange.respond(
        ctx.session !== null && !ctx.session.metaConnectDeliveryOnly ? ctx.session.drain() : [],
      );
  };
  let pending: void | Promise<void>;
  try {
    pending = kernel.handleBatch(messages, ctx, text.includes('__proto__'));
  } catch (err) {
    kernel.log.error({ err }, 'long-poll batch failed');
    exchange.fail(500, 'internal error');
    return;
  }
  if (pending === undefined) finish();
  else
    pending.then(finish, (err: unknown) => {
      kernel.log.error({ err }, 'long-poll batch failed');
      exchange.fail(500, 'internal error');
    });
}
