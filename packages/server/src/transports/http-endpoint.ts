/**
 * The HTTP side of the endpoint, shared by the transports that answer POSTs (long-polling,
 * and the streaming ones built on it): `POST <path>` and `POST <path>/…` and their CORS
 * preflight, in an encapsulated Fastify scope so its body parsers do not leak into the host
 * application, and the same POSTs served from the raw `node:http` request on the direct
 * path (`http/direct-endpoint.ts`). Both ways end in one `HttpPost` — body read by
 * `body-reader.ts`, answer through an `HttpReply` — handed to the first transport that
 * `accepts` its subpath.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { formatError } from '@bayou/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResolvedOptions } from '../options.js';
import {
  type BodyKind,
  bodyKind,
  drainRequest,
  FORM_TYPE,
  readBody,
  TEXT_TYPES,
  TOO_LARGE,
  UNSUPPORTED,
  UNSUPPORTED_BODY,
} from './body-reader.js';
import { replyFor } from './http-compression.js';
import { FastifyHttpReply, RawHttpReply } from './http-reply.js';
import { ORIGIN_REFUSED_BODY, type OriginGuard } from './origin-guard.js';
import type { HttpPost } from './poll-request.js';
import type { TransportKernel } from './transport-kernel.js';

export type HttpEndpointOptions = Pick<
  ResolvedOptions,
  'path' | 'allowedOrigins' | 'maxPayloadBytes' | 'compression' | 'compressionThreshold'
>;

/** A transport answering POSTs to the endpoint. */
export interface HttpTransport {
  /** Whether it serves a POST to `subpath` (the URL path after the endpoint's, `''` for the path itself). */
  accepts(subpath: string): boolean;
  /** Answers the POST, now or later, through `post.reply`. */
  serve(post: HttpPost): void;
  /** Shutdown: answers what is held for other nodes (see `cluster/poll-forwarding.ts`). */
  drain(): void | Promise<void>;
}

/** What the plugin registers. */
export interface HttpEndpoint {
  /** Registers `POST <path>` (and `<path>/*`) and the CORS preflight in Fastify `scope`. */
  routes(scope: FastifyInstance): Promise<void>;
  /** Serves a POST from the raw request, without Fastify (see `http/direct-endpoint.ts`). */
  serveDirect(req: IncomingMessage, res: ServerResponse, ip: string | undefined, secure: boolean): void;
  drain(): Promise<void>;
}

/** Transports are asked in order: put the catch-all (long-polling) last. */
export function createHttpEndpoint(
  kernel: Pick<TransportKernel, 'log'>,
  options: HttpEndpointOptions,
  transports: readonly HttpTransport[],
  origins: OriginGuard,
): HttpEndpoint {
  return new Endpoint(kernel, options, transports, origins);
}

class Endpoint implements HttpEndpoint {
  /** The 413 answer: the Bayeux error and a sentence. */
  private readonly tooLarge: { error: string; message: string };
  private readonly tooLargeBody: string;
  /** The endpoint's path without a trailing slash. */
  private readonly base: string;

  constructor(
    private readonly kernel: Pick<TransportKernel, 'log'>,
    private readonly options: HttpEndpointOptions,
    private readonly transports: readonly HttpTransport[],
    private readonly origins: OriginGuard,
  ) {
    this.tooLarge = {
      error: formatError('messageTooLarge', [options.maxPayloadBytes]),
      message: `request body larger than ${options.maxPayloadBytes} bytes`,
    };
    this.tooLargeBody = JSON.stringify(this.tooLarge);
    this.base = options.path.replace(/\/$/, '');
  }

  /** Hands a POST, its body read, to the first transport that serves its subpath. */
  private dispatch(
    text: string,
    raw: IncomingMessage,
    ip: string | undefined,
    secure: boolean,
    plain: RawHttpReply | FastifyHttpReply,
  ): void {
    const subpath = subpathOf(raw.url, this.base);
    const reply = replyFor(plain, raw.headers['accept-encoding'], this.options);
    for (const transport of this.transports) {
      if (!transport.accepts(subpath)) continue;
      transport.serve({ text, raw, subpath, ip, secure, reply });
      return;
    }
    reply.send(404, '{"error":"no transport serves this path"}');
  }

  async routes(scope: FastifyInstance): Promise<void> {
    const { options, kernel, tooLarge, origins } = this;
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
    scope.removeContentTypeParser([...TEXT_TYPES]);
    // Fastify hands its parsers the payload stream (after any preParsing hook): the one body
    // reader reads it, as it reads the raw request on the direct path.
    scope.addContentTypeParser([...TEXT_TYPES, FORM_TYPE], (req, payload, done) => {
      readBody(payload, req.headers, options.maxPayloadBytes, bodyKind(req.headers), (body) => {
        if (typeof body === 'string') done(null, body);
        else done(bodyError(body === TOO_LARGE ? 413 : 400));
      });
    });
    // CometD's client appends the message type to the URL (`/bayeux/connect`) by default.
    for (const url of [options.path, `${this.base}/*`]) {
      scope.options(url, (req, reply) => preflight(origins, req, reply));
      scope.post(url, (req, reply) => {
        if (!origins.admit(req.headers, reply, 'long-polling')) {
          reply.code(403).type('application/json').send(ORIGIN_REFUSED_BODY);
          return;
        }
        const text = typeof req.body === 'string' ? req.body : '';
        this.dispatch(text, req.raw, req.ip, req.protocol === 'https', new FastifyHttpReply(reply));
      });
    }
  }

  /** Bound: handed to `http/direct-endpoint.ts` as its `serve`. */
  readonly serveDirect = (
    req: IncomingMessage,
    res: ServerResponse,
    ip: string | undefined,
    secure: boolean,
  ): void => {
    const reply = new RawHttpReply(res);
    const kind: BodyKind = bodyKind(req.headers);
    if (kind === UNSUPPORTED) {
      reply.send(415, UNSUPPORTED_BODY);
      drainRequest(req);
      return;
    }
    readBody(req, req.headers, this.options.maxPayloadBytes, kind, (body) => {
      if (body === TOO_LARGE) {
        reply.send(413, this.tooLargeBody);
        drainRequest(req);
      } else if (body === null) {
        if (!res.destroyed) reply.send(400, '{"error":"request body could not be read"}');
      } else this.serveRead(body, req, ip, secure, reply);
    });
  };

  private serveRead(
    body: string,
    req: IncomingMessage,
    ip: string | undefined,
    secure: boolean,
    reply: RawHttpReply,
  ): void {
    try {
      if (!this.origins.admit(req.headers, reply, 'long-polling')) {
        reply.send(403, ORIGIN_REFUSED_BODY);
        return;
      }
      this.dispatch(body, req, ip, secure, reply);
    } catch (err) {
      this.kernel.log.error({ err }, 'long-poll request failed');
      if (!reply.sent) reply.send(500, '{"error":"internal error"}');
    }
  }

  async drain(): Promise<void> {
    await Promise.all(this.transports.map((transport) => transport.drain()));
  }
}

/** A body the reader refused, for the scope's error handler (which answers 413 as the direct path). */
function bodyError(status: 400 | 413): Error & { statusCode: number } {
  const message = status === 413 ? 'request body too large' : 'request body could not be read';
  return Object.assign(new Error(message), { statusCode: status });
}

/** The URL path after the endpoint's `base` (no trailing slash): `''`, `'/connect'`… */
function subpathOf(url: string | undefined, base: string): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.length <= base.length ? '' : path.slice(base.length);
}

function preflight(origins: OriginGuard, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!origins.admit(req.headers, reply, 'long-polling', true)) {
    return reply.code(403).type('application/json').send(ORIGIN_REFUSED_BODY);
  }
  reply.header('access-control-allow-methods', 'POST, OPTIONS');
  reply.header(
    'access-control-allow-headers',
    req.headers['access-control-request-headers'] ?? 'content-type',
  );
  reply.header('access-control-max-age', '86400');
  return reply.code(204).send();
}
