/**
 * The long-polling transport: `POST <path>` with a JSON array (or a form-encoded
 * `message=`) in an encapsulated Fastify scope, so its body parsers do not leak into the
 * host application. A `/meta/connect` in the batch may hold the response; it is then
 * answered by the flusher or the sweep through `LongPollExchange.respond`.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { decodeBatch } from '@bayou/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createBatchContext } from '../bayeux/batch-context.js';
import type { Bayou } from '../bayou.js';
import type { ResolvedOptions } from '../options.js';
import type { PendingPoll, Session } from '../session/session.js';
import { originAllowed, requestInfo } from './request-info.js';

const BROWSER_COOKIE = 'BAYEUX_BROWSER';
const EXCHANGE = Symbol('bayou.exchange');
type TaggedResponse = ServerResponse & { [EXCHANGE]?: LongPollExchange };

type LongPollOptions = Pick<
  ResolvedOptions,
  'path' | 'allowedOrigins' | 'maxPayloadBytes' | 'maxBatchMessages'
>;

export class LongPollExchange implements PendingPoll {
  readonly replies: string[] = [];
  done = false;
  session: Session | null = null;
  constructor(
    private readonly reply: FastifyReply,
    readonly bayou: Bayou,
  ) {}

  respond(messages: string[]): void {
    if (this.done) return;
    this.done = true;
    const all = this.replies.length > 0 ? this.replies.concat(messages) : messages;
    const body = `[${all.join(',')}]`;
    this.bayou.outbound.countResponse(all.length, body.length);
    this.reply.header('content-type', 'application/json;charset=utf-8').send(body);
  }

  /** Watches for the client going away while the connect is held. */
  hold(session: Session): void {
    this.session = session;
    const raw = this.reply.raw as TaggedResponse;
    raw[EXCHANGE] = this;
    raw.once('close', onPollClosed);
  }
}

function onPollClosed(this: TaggedResponse): void {
  const exchange = this[EXCHANGE];
  if (exchange === undefined || exchange.done || exchange.session === null) return;
  // Queued messages stay with the session for its next connect.
  exchange.done = true;
  exchange.bayou.pollAborted(exchange.session, exchange);
}

function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

function applyCors(req: FastifyRequest, reply: FastifyReply, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!originAllowed(allowed, origin)) return false;
  if (origin !== undefined) {
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('vary', 'Origin');
  }
  return true;
}

export function longPollingRoutes(bayou: Bayou, options: LongPollOptions) {
  return async function routes(scope: FastifyInstance): Promise<void> {
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
        handlePoll(bayou, options, req, reply);
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

function handlePoll(bayou: Bayou, options: LongPollOptions, req: FastifyRequest, reply: FastifyReply): void {
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
  if (browserId === null) {
    browserId = randomBytes(12).toString('base64url');
    reply.header('set-cookie', `${BROWSER_COOKIE}=${browserId}; Path=/; HttpOnly; SameSite=Lax`);
  }
  const exchange = new LongPollExchange(reply, bayou);
  // Handlers write into the exchange's replies, so a held connect answers with them.
  const info = requestInfo('long-polling', req.raw);
  const ctx = createBatchContext('long-polling', info, null, exchange, browserId, exchange.replies);
  const finish = (): void => {
    if (ctx.held && ctx.session?.held?.poll === exchange) exchange.hold(ctx.session);
    // Queued deliveries ride along, except for acknowledging sessions: theirs go in connect replies.
    else if (!ctx.held)
      exchange.respond(ctx.session !== null && ctx.session.ack === null ? ctx.session.drain() : []);
  };
  const pending = bayou.handleBatch(decoded.messages, ctx, text.includes('__proto__'));
  if (pending === undefined) finish();
  else
    pending.then(finish, (err: unknown) => {
      bayou.log.error({ err }, 'long-poll batch failed');
      if (!exchange.done) reply.code(500).send({ error: 'internal error' });
    });
}
