/**
 * The HTTP publish API for backends that do not speak Bayeux (a Python service, a cron
 * job): `POST /api/publish` with `Authorization: Bearer <key>` and a JSON body.
 *
 * - `{ "channel": "/x", "data": ... }` → `200 { "channel", "position" }`
 * - `{ "messages": [{ channel, data }, ...] }` or a bare array (at most `maxBatchMessages`,
 *   default 1000) → `200 { "results": [...] }`, one `{ channel, position }` per message, in
 *   order. Every message is validated before any is published: a bad batch is refused
 *   whole. The publishes are then handed to the engine all at once (pipelined: on Redis
 *   one write, not one round trip each); when the engine refuses some, the answer is the
 *   first refusal's status with `{ error, index, results }`, each result either
 *   `{ channel, position }` (published) or `{ channel, error }`.
 * - The engine cannot answer (Redis away, a failover) → `503` with `Retry-After`, logged
 *   once per outage at warn (by the facade); not a 500 with a stack trace per request.
 * - A missing or wrong key → `401` (the key is compared in constant time); no key
 *   configured → `404` for every request, so the API is off unless asked for.
 * - A bad channel (not a plain broadcast channel) or body → `400`; a message whose data
 *   is larger than `maxMessageBytes`, or a body over `bodyLimit` → `413`.
 *
 * `position` is whatever the `publish` option resolves to (the engine's position of the
 * message once it reports one, `null` while `publish` returns nothing).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  EXT_TRACEPARENT,
  formatError,
  isTraceparent,
  jsonDepthExceeds,
  MAX_JSON_DEPTH,
  validateMessage,
} from '@bayou/protocol';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BayouError } from '../errors.js';
import { invalidOption } from '../option-errors.js';

export interface PublishApiOptions {
  /** The key (or keys, for rotation) a caller must present. Unset: the API answers 404. */
  apiKey?: string | readonly string[];
  /** Publishes one message; its result (sync or async) is reported as `position`. */
  /** `traceparent` is the request's W3C `traceparent` header, when it has one. */
  publish: (channel: string, data: unknown, traceparent?: string) => unknown;
  /** Route path. Default `'/api/publish'`. */
  path?: string;
  /** Largest request body in bytes. Default `1048576` (1 MiB). */
  bodyLimit?: number;
  /** Largest `data` of one message, serialized, in bytes. Default `65536` (as `maxPayloadBytes`). */
  maxMessageBytes?: number;
  /** Most messages in one batch. Default `1000` (as `maxBatchMessages`). */
  maxBatchMessages?: number;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Whether `presented` equals one of `keys`, in time independent of where they differ. */
export function keyMatches(presented: string, keys: readonly Buffer[]): boolean {
  const p = digest(presented);
  let found = false;
  for (const k of keys) found = timingSafeEqual(p, k) || found;
  return found;
}

export function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? (m[1] as string) : null;
}

/**
 * An `onRequest` hook letting through only a request with one of `keys` as its bearer key:
 * `404 { error: off }` when no key is configured, `401` for a missing or wrong one.
 */
export function requireBearerKey(
  keys: readonly Buffer[],
  off: string,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async (request, reply) => {
    if (keys.length === 0) return reply.code(404).send({ error: off });
    const presented = bearer(request);
    if (presented === null || !keyMatches(presented, keys)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="bayou"')
        .send({ error: presented === null ? 'missing bearer key' : 'wrong key' });
    }
    return undefined;
  };
}

type Checked = { ok: true; channel: string; data: unknown } | { ok: false; status: number; error: string };

function checkMessage(value: unknown, maxBytes: number, scanForProto: boolean): Checked {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, status: 400, error: 'each message must be an object { channel, data }' };
  const { channel, data } = value as { channel?: unknown; data?: unknown };
  const v = validateMessage({ channel, data }, scanForProto);
  if (!v.ok) return { ok: false, status: 400, error: v.error };
  if (v.channel.kind !== 'broadcast' || v.channel.wildcard !== null)
    return { ok: false, status: 400, error: formatError('channelInvalid', [v.message.channel]) };
  if (data === undefined)
    return { ok: false, status: 400, error: `message to ${v.message.channel} has no "data"` };
  const size = Buffer.byteLength(JSON.stringify(data));
  if (size > maxBytes) return { ok: false, status: 413, error: formatError('messageTooLarge', [maxBytes]) };
  return { ok: true, channel: v.message.channel, data };
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) invalidOption(`${name}`, `a positive integer`);
  return value;
}

/** The digests of the configured API keys (each at least 16 characters). */
export function apiKeyDigests(apiKey: PublishApiOptions['apiKey']): Buffer[] {
  const raw = apiKey === undefined ? [] : typeof apiKey === 'string' ? [apiKey] : [...apiKey];
  if (raw.some((k) => typeof k !== 'string' || k.length < 16))
    invalidOption('apiKey', 'at least 16 characters');
  return raw.map(digest);
}

/** The route's JSON: nesting bounded before `JSON.parse`, the text kept for the `__proto__` scan. */
function parseBoundedJson(text: string): { text: string; value: unknown } {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    throw Object.assign(new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 });
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (err) {
    throw Object.assign(new Error(`malformed JSON: ${(err as Error).message}`), { statusCode: 400 });
  }
}

/**
 * The status of a failed publish: a BayouError (a record subject, a channel it refuses) or
 * a 4xx is the caller's fault; anything else thrown by the call itself is a bug (500);
 * anything else the engine rejected with means it could not answer (503, retry later).
 */
function errorStatus(err: unknown, rejected: boolean): number {
  if (err instanceof BayouError) return 400;
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof code === 'number' && code >= 400 && code < 500) return code;
  return rejected ? 503 : 500;
}

/** Seconds a caller refused with 503 is told to wait before publishing again. */
export const PUBLISH_RETRY_AFTER_SECONDS = 1;

type Outcome = { ok: true; position: unknown } | { ok: false; status: number; error: string };

/** A request's `traceparent` header, when it is a valid one (W3C: an invalid one is ignored). */
function traceHeader(value: string | string[] | undefined): string | undefined {
  return isTraceparent(value) ? value : undefined;
}

/** One publish, settled: never throws, never rejects. */
function publishOne(
  publish: PublishApiOptions['publish'],
  channel: string,
  data: unknown,
  log: FastifyBaseLogger,
  traceparent?: string,
): Outcome | Promise<Outcome> {
  const failed =
    (rejected: boolean) =>
    (err: unknown): Outcome => {
      const status = errorStatus(err, rejected);
      if (status === 500) log.error({ err }, 'publish API failed');
      const error =
        status === 503
          ? 'the engine is unavailable: publish again later'
          : status === 500
            ? 'publish failed'
            : (err as Error).message;
      return { ok: false, status, error };
    };
  try {
    const r = traceparent === undefined ? publish(channel, data) : publish(channel, data, traceparent);
    if (!(r instanceof Promise)) return { ok: true, position: r ?? null };
    return r.then((position: unknown) => ({ ok: true, position: position ?? null }), failed(true));
  } catch (err) {
    return failed(false)(err);
  }
}

/** Sends a refusal: a 503 carries `Retry-After`, a 500 (a bug) is logged with its cause. */
function refuse(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  if (status === 503) reply.header('retry-after', String(PUBLISH_RETRY_AFTER_SECONDS));
  return reply.code(status).send(body);
}

export async function publishApi(app: FastifyInstance, options: PublishApiOptions): Promise<void> {
  if (typeof options.publish !== 'function') invalidOption('publish', 'a function');
  const path = options.path ?? '/api/publish';
  const bodyLimit = positive('bodyLimit', options.bodyLimit ?? 1024 * 1024);
  const maxBytes = positive('maxMessageBytes', options.maxMessageBytes ?? 64 * 1024);
  const maxBatch = positive('maxBatchMessages', options.maxBatchMessages ?? 1000);
  const keys = apiKeyDigests(options.apiKey);

  // Own scope: the JSON parser below (bounded depth) applies to this route only.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
      try {
        done(null, parseBoundedJson(body as string));
      } catch (err) {
        done(err as Error);
      }
    });
    scope.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
      const status = errorStatus(err, false);
      if (status === 500) scope.log.error({ err }, 'publish API failed');
      reply.code(status).send({ error: status === 500 ? 'publish failed' : err.message });
    });

    scope.post(path, {
      bodyLimit,
      // The key is checked before the body is read: an anonymous caller costs no parsing.
      onRequest: requireBearerKey(keys, 'the publish API is off: no API key is configured'),
      handler: async (request, reply) => {
        const body = request.body as { text: string; value: unknown } | undefined;
        if (body === undefined) return reply.code(415).send({ error: 'send application/json' });
        const { text, value } = body;
        const trace = traceHeader(request.headers[EXT_TRACEPARENT]);
        const proto = text.includes('__proto__');
        const batch = Array.isArray(value)
          ? value
          : value !== null &&
              typeof value === 'object' &&
              Array.isArray((value as { messages?: unknown }).messages)
            ? (value as { messages: unknown[] }).messages
            : null;
        if (batch === null) {
          const checked = checkMessage(value, maxBytes, proto);
          if (!checked.ok) return reply.code(checked.status).send({ error: checked.error });
          const outcome = await publishOne(
            options.publish,
            checked.channel,
            checked.data,
            request.log,
            trace,
          );
          if (!outcome.ok) return refuse(reply, outcome.status, { error: outcome.error });
          return { channel: checked.channel, position: outcome.position };
        }
        if (batch.length === 0) return reply.code(400).send({ error: 'empty batch' });
        if (batch.length > maxBatch)
          return reply.code(413).send({ error: `too many messages in one batch (max ${maxBatch})` });
        const checked = batch.map((m) => checkMessage(m, maxBytes, proto));
        const bad = checked.findIndex((c) => !c.ok);
        if (bad >= 0) {
          const c = checked[bad] as Extract<Checked, { ok: false }>;
          return reply.code(c.status).send({ error: c.error, index: bad });
        }
        const valid = checked as Extract<Checked, { ok: true }>[];
        const publish = options.publish;
        const traced = trace === undefined ? publish : (c: string, d: unknown) => publish(c, d, trace);
        return publishAll(reply, request.log, traced, valid);
      },
    });
  });
}

/**
 * Publishes a validated batch: every publish is handed to the engine before any is awaited
 * (one write on Redis), the answers collected in order.
 */
async function publishAll(
  reply: FastifyReply,
  log: FastifyBaseLogger,
  publish: PublishApiOptions['publish'],
  messages: readonly { channel: string; data: unknown }[],
): Promise<unknown> {
  const pending = messages.map((m) => publishOne(publish, m.channel, m.data, log));
  const outcomes = await Promise.all(pending);
  const results = outcomes.map((o, i) => {
    const channel = (messages[i] as { channel: string }).channel;
    return o.ok ? { channel, position: o.position } : { channel, error: o.error };
  });
  const first = outcomes.findIndex((o) => !o.ok);
  if (first < 0) return { results };
  const refused = outcomes[first] as Extract<Outcome, { ok: false }>;
  return refuse(reply, refused.status, { error: refused.error, index: first, results });
}
