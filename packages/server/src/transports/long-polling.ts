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
import { type BatchContext, createBatchContext } from '../bayeux/batch-context.js';
import type { ForwardRequest, ForwardResponse } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';
import { RandomIds } from '../random-ids.js';
import type { Session } from '../session/session.js';
import type { PendingPoll } from '../session/session-lifecycle.js';
import type { RequestInfo } from '../types.js';
import {
  applyCors,
  bodyKind,
  drainRequest,
  FORM,
  formMessage,
  readBody,
  readCookie,
  TOO_LARGE,
  UNSUPPORTED,
  UNSUPPORTED_BODY,
} from './http-request.js';
import { requestInfo } from './request-info.js';
import type { TransportKernel } from './transport-kernel.js';

const BROWSER_COOKIE = 'BAYEUX_BROWSER';
const EXCHANGE = Symbol('bayou.exchange');
type TaggedResponse = ServerResponse & { [EXCHANGE]?: LongPollExchange };

type LongPollOptions = Pick<
  ResolvedOptions,
  'path' | 'allowedOrigins' | 'maxPayloadBytes' | 'maxBatchMessages'
>;

/**
 * Where a long-poll's answer goes: a Fastify reply, the raw response of the direct path,
 * or the reply to a forwarded batch. `bytes` is the body's UTF-8 length when known.
 */
export interface PollReply {
  /** Adds a response header (before `send`). */
  header(name: string, value: string): void;
  send(status: number, body: string, bytes?: number): void;
  readonly sent: boolean;
}

export class LongPollExchange implements PendingPoll {
  readonly replies: string[] = [];
  done = false;
  session: Session | null = null;

  constructor(
    private readonly reply: PollReply,
    readonly kernel: TransportKernel,
  ) {}

  respond(messages: string[]): void {
    if (this.done) return;
    this.done = true;
    const all = this.replies.length > 0 ? this.replies.concat(messages) : messages;
    const body = `[${all.join(',')}]`;
    const bytes = Buffer.byteLength(body);
    this.kernel.outbound.countResponse(all.length, bytes);
    this.reply.send(200, body, bytes);
  }

  fail(status: number, error: string): void {
    if (this.done) return;
    this.done = true;
    this.reply.send(status, JSON.stringify({ error }));
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

const JSON_TYPE = 'application/json;charset=utf-8';

/** A Fastify reply as a `PollReply`. */
class FastifyPollReply implements PollReply {
  constructor(private readonly reply: FastifyReply) {}

  header(name: string, value: string): void {
    this.reply.header(name, value);
  }

  send(status: number, body: string): void {
    this.reply.code(status).header('content-type', JSON_TYPE).send(body);
  }

  get sent(): boolean {
    return this.reply.sent;
  }
}

/** The raw `ServerResponse` of the direct path as a `PollReply`: one `writeHead`, one `end`. */
class DirectReply implements PollReply {
  /** Extra headers as name, value, name, value… (`writeHead`'s flat form). */
  private head: string[] | null = null;
  sent = false;

  constructor(private readonly res: ServerResponse) {}

  header(name: string, value: string): void {
    if (this.head === null) this.head = [name, value];
    else this.head.push(name, value);
  }

  send(status: number, body: string, bytes = Buffer.byteLength(body)): void {
    if (this.sent) return;
    this.sent = true;
    const head = this.head ?? [];
    head.push('content-type', JSON_TYPE, 'content-length', String(bytes));
    this.res.writeHead(status, head);
    this.res.end(body);
  }
}

/** What `createLongPolling` gives the plugin. */
export interface LongPolling {
  /** Registers `POST <path>` (and `<path>/*`) and the CORS preflight in Fastify `scope`. */
  routes(scope: FastifyInstance): Promise<void>;
  /**
   * Serves a `POST` to the endpoint from the raw `node:http` request, without Fastify's
   * routing, body parsing and reply (see `http/direct-endpoint.ts` for when it is used).
   */
  serveDirect(req: IncomingMessage, res: ServerResponse, ip: string | undefined, secure: boolean): void;
  /**
   * Shutdown: answers the batches relayed to other nodes with 503 at once (their clients
   * send them again elsewhere, the ack extension resending what was in flight), so no
   * connect held on another node keeps this one from closing.
   */
  drain(): void;
}

/** What the requests of one endpoint share. */
interface PollState {
  readonly browserIds: RandomIds;
  /** Batches relayed to their owner node and not yet answered. */
  readonly relays: Set<PollReply>;
}

const SHUTTING_DOWN = '{"error":"server shutting down: send the request again"}';
const ENGINE_AWAY = '{"error":"the engine is unavailable: send the request again"}';

export function createLongPolling(kernel: TransportKernel, options: LongPollOptions): LongPolling {
  kernel.forwardHandler = (request) => runForwarded(kernel, options, request);
  const state: PollState = { browserIds: new RandomIds(12), relays: new Set() };
  const tooLarge = {
    error: formatError('messageTooLarge', [options.maxPayloadBytes]),
    message: `request body larger than ${options.maxPayloadBytes} bytes`,
  };
  const tooLargeBody = JSON.stringify(tooLarge);

  async function routes(scope: FastifyInstance): Promise<void> {
    scope.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
        // The answer goes out first; the rest of the body is then read within a bound.
        reply.code(413).send(tooLarge);
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
      done(null, formMessage(body as unknown as string));
    });
    // CometD's client appends the message type to the URL (`/bayeux/connect`) by default.
    for (const url of [options.path, `${options.path.replace(/\/$/, '')}/*`]) {
      scope.options(url, (req, reply) => preflight(options, req, reply));
      scope.post(url, { bodyLimit: options.maxPayloadBytes }, (req, reply) => {
        if (!applyCors(req.headers, reply, options.allowedOrigins)) {
          reply.code(403).send({ error: 'origin not allowed' });
          return;
        }
        const text = typeof req.body === 'string' ? req.body : '';
        const secure = req.protocol === 'https';
        handlePoll(
          kernel,
          options,
          state,
          text,
          req.raw,
          req.ip,
          secure,
          new FastifyPollReply(reply),
          reply.raw,
        );
      });
    }
  }

  function serveDirect(
    req: IncomingMessage,
    res: ServerResponse,
    ip: string | undefined,
    secure: boolean,
  ): void {
    const reply = new DirectReply(res);
    const form = bodyKind(req.headers);
    if (form === UNSUPPORTED) {
      reply.send(415, UNSUPPORTED_BODY);
      drainRequest(req);
      return;
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > options.maxPayloadBytes) {
      reply.send(413, tooLargeBody);
      drainRequest(req);
      return;
    }
    readBody(req, options.maxPayloadBytes, (body) => {
      if (body === TOO_LARGE) {
        reply.send(413, tooLargeBody);
        drainRequest(req);
        return;
      }
      if (body === null) {
        if (!res.destroyed) reply.send(400, '{"error":"request body could not be read"}');
        return;
      }
      try {
        if (!applyCors(req.headers, reply, options.allowedOrigins)) {
          reply.send(403, '{"error":"origin not allowed"}');
          return;
        }
        const text = form === FORM ? formMessage(body) : body;
        handlePoll(kernel, options, state, text, req, ip, secure, reply, res);
      } catch (err) {
        kernel.log.error({ err }, 'long-poll request failed');
        if (!reply.sent) reply.send(500, '{"error":"internal error"}');
      }
    });
  }

  function drain(): void {
    for (const relay of state.relays) if (!relay.sent) relay.send(503, SHUTTING_DOWN);
    state.relays.clear();
  }

  return { routes, serveDirect, drain };
}

function preflight(options: LongPollOptions, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!applyCors(req.headers, reply, options.allowedOrigins))
    return reply.code(403).send({ error: 'origin not allowed' });
  reply.header('access-control-allow-methods', 'POST, OPTIONS');
  reply.header(
    'access-control-allow-headers',
    req.headers['access-control-request-headers'] ?? 'content-type',
  );
  reply.header('access-control-max-age', '86400');
  return reply.code(204).send();
}

/** A body in hand, on either path: decode, cookie, then run here or on the owner node. */
function handlePoll(
  kernel: TransportKernel,
  options: LongPollOptions,
  state: PollState,
  text: string,
  raw: IncomingMessage,
  ip: string | undefined,
  secure: boolean,
  reply: PollReply,
  res: ServerResponse,
): void {
  const decoded = decodeBatch(text);
  if (!decoded.ok) {
    reply.send(400, JSON.stringify({ error: decoded.reason }));
    return;
  }
  if (decoded.messages.length > options.maxBatchMessages) {
    reply.send(
      400,
      JSON.stringify({ error: `too many messages in one request (max ${options.maxBatchMessages})` }),
    );
    return;
  }
  let browserId = readCookie(raw.headers.cookie, BROWSER_COOKIE);
  if (browserId === null) {
    browserId = state.browserIds.next();
    reply.header(
      'set-cookie',
      `${BROWSER_COOKIE}=${browserId}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    );
  }
  const info = requestInfo('long-polling', raw, ip, browserId, secure);
  const owner = kernel.ownedElsewhere((decoded.messages[0] as { clientId?: unknown } | null)?.clientId);
  if (owner !== null) {
    const poll = { text, messages: decoded.messages, info, browserId };
    state.relays.add(reply);
    void forwardPoll(kernel, owner, poll, reply, res).finally(() => state.relays.delete(reply));
    return;
  }
  runPoll(kernel, decoded.messages, text, info, browserId, reply, res);
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
  reply: PollReply,
  res: ServerResponse,
): Promise<void> {
  const local = (): void => {
    if (!reply.sent) runPoll(kernel, poll.messages, poll.text, poll.info, poll.browserId, reply, res);
  };
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
    // Unless shutdown answered first: then the owner's ack extension resends what this carried.
    if (!reply.sent) reply.send(answer.status, answer.body);
  } catch (err) {
    if (!kernel.engineReady()) {
      // Redis is away, not (as far as anyone knows) the owner: answering here would tell the
      // client its living session is unknown (402), and a subscribe in the batch would fail
      // on a fresh session too. 503: the client sends the batch again on the same session.
      kernel.log.warn(
        { err, owner },
        'forwarding a long-poll failed while the engine is away; answering 503',
      );
      if (!reply.sent) reply.send(503, ENGINE_AWAY);
      return;
    }
    kernel.log.warn({ err, owner }, 'forwarding a long-poll failed; answering here');
    local();
  }
}

/** The answer to a forwarded batch, relayed to the node that received it. */
class ForwardedReply implements PollReply {
  sent = false;
  constructor(private readonly resolve: (response: ForwardResponse) => void) {}
  header(): void {}
  send(status: number, body: string): void {
    this.sent = true;
    this.resolve({ status, body });
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
    runPoll(
      kernel,
      decoded.messages,
      request.body,
      info,
      request.browserId,
      new ForwardedReply(resolve),
      null,
    );
  });
}

function runPoll(
  kernel: TransportKernel,
  messages: unknown[],
  text: string,
  info: RequestInfo,
  browserId: string | null,
  reply: PollReply,
  raw: ServerResponse | null,
): void {
  const exchange = new LongPollExchange(reply, kernel);
  // Handlers write into the exchange's replies, so a held connect answers with them.
  const ctx = createBatchContext('long-polling', info, null, exchange, browserId, exchange.replies);
  let pending: void | Promise<void>;
  try {
    pending = kernel.handleBatch(messages, ctx, text.includes('__proto__'));
  } catch (err) {
    kernel.log.error({ err }, 'long-poll batch failed');
    exchange.fail(500, 'internal error');
    return;
  }
  if (pending === undefined) finishPoll(exchange, ctx, raw);
  else
    pending.then(
      () => finishPoll(exchange, ctx, raw),
      (err: unknown) => {
        kernel.log.error({ err }, 'long-poll batch failed');
        exchange.fail(500, 'internal error');
      },
    );
}

/** After the batch: hold the connect, or answer with the replies and what is queued. */
function finishPoll(exchange: LongPollExchange, ctx: BatchContext, raw: ServerResponse | null): void {
  if (ctx.held && ctx.session?.held?.poll === exchange) exchange.hold(ctx.session, raw);
  // Queued deliveries ride along, unless they travel only in connect replies.
  else if (!ctx.held)
    exchange.respond(ctx.session !== null && !ctx.session.metaConnectDeliveryOnly ? ctx.session.drain() : []);
}
