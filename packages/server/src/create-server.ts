/**
 * The standalone server: a Fastify app (TLS, HTTP/2, request deadlines, the demo feed) with
 * the Bayou plugin registered on it. The node itself is built by the composition root,
 * `compose.ts`, which the plugin calls.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { BayouApp } from './bayou-app.js';
import { h2cServer } from './http/h2c-server.js';
import { type BayouPluginOptions, bayou } from './http/plugin.js';
import { resolveTrustProxy, type TrustProxy } from './http/trust-proxy.js';
import { defaultOptions } from './options.js';
import { DEMO_PATTERN, DemoFeed, type DemoFeedOptions, resolveDemoFeedOptions } from './records/demo-feed.js';
import { STANDALONE_DEFAULTS } from './server-defaults.js';

export interface CreateServerOptions extends BayouPluginOptions {
  /** Interface to listen on. Default `'0.0.0.0'`. */
  host?: string;
  /** Port; `0` picks a free one. Default `8080`. */
  port?: number;
  /** Fastify (pino) logger options, or `false`. Default `false`. */
  logger?: FastifyServerOptions['logger'];
  /** TLS key and certificate (PEM) to serve https and wss. Default: none. */
  https?: { key: string | Buffer; cert: string | Buffer };
  /**
   * Serve HTTP/2. With `https`: negotiated by ALPN, HTTP/1.1 (and WebSocket, which stays on
   * HTTP/1.1) alongside on the same port. Without: h2c (prior knowledge) for a proxy that
   * terminates TLS, HTTP/1.1 and WebSocket still served on the port (told apart by the
   * HTTP/2 preface). Long-polls then go through Fastify (no direct path). Default `false`
   * (`bayou start` turns it on with TLS).
   */
  http2?: boolean;
  /** Run the demo price feed on `/demo/prices/<SYMBOL>` records. Default: off. */
  demoFeed?: boolean | DemoFeedOptions;
  /**
   * Which peers are trusted to tell the client's address and protocol (`X-Forwarded-For`,
   * `X-Forwarded-Proto`): Fastify's `trustProxy` — `true`, a hop count, addresses/CIDRs or
   * `loopback`/`linklocal`/`uniquelocal` (comma-separated or an array), or a function.
   * Behind a load balancer set it to the balancer's address, or every client is the
   * balancer to the per-IP limits. Default: none trusted.
   */
  trustProxy?: TrustProxy;
}

export interface BayouServer {
  readonly app: FastifyInstance;
  readonly bayou: BayouApp;
  /** Starts listening; resolves to the base URL, e.g. `http://127.0.0.1:8080`. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * How long a request may take to arrive whole — headers and body (Node answers `408` and
 * closes the connection past it) — and how often Node checks: the standalone server holds
 * requests to `handshakeTimeout`, so a long-poll whose body trickles in is no cheaper a
 * way to hold a socket than one that sends nothing. A request already received (a held
 * long-poll) is not affected. `null` when `handshakeTimeout` is `0` (or invalid: the
 * plugin reports that).
 */
function requestDeadline(handshakeTimeout: unknown): { timeout: number; every: number } | null {
  const timeout = handshakeTimeout === undefined ? defaultOptions.handshakeTimeout : handshakeTimeout;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout <= 0) return null;
  return { timeout, every: Math.max(10, Math.min(1000, Math.floor(timeout / 4))) };
}

export async function createServer(options: CreateServerOptions = {}): Promise<BayouServer> {
  const {
    host = STANDALONE_DEFAULTS.host,
    port = STANDALONE_DEFAULTS.port,
    logger = false,
    https,
    http2 = false,
    demoFeed,
    trustProxy,
    ...pluginOptions
  } = options;
  const trusted = resolveTrustProxy(trustProxy);
  // Checked before anything starts: a bad `demoFeed` is a setup error, not a half-built app.
  const feed = demoFeed ? resolveDemoFeedOptions(demoFeed === true ? {} : demoFeed) : null;
  const arrival = requestDeadline(pluginOptions.handshakeTimeout);
  // A Comet endpoint answers thousands of polls a second: no per-request log lines.
  const base = {
    logger,
    logController: new LogController({ disableRequestLogging: true }),
    ...(trusted !== undefined ? { trustProxy: trusted } : {}),
    ...(arrival !== null
      ? { requestTimeout: arrival.timeout, http: { connectionsCheckingInterval: arrival.every } }
      : {}),
  };
  const app = (https
    ? Fastify({
        ...base,
        // HTTP/2 by ALPN, HTTP/1.1 (and so WebSocket) alongside.
        ...(http2 ? { http2: true } : {}),
        https: {
          ...https,
          ...(http2 ? { allowHTTP1: true } : {}),
          ...(arrival !== null ? { connectionsCheckingInterval: arrival.every } : {}),
        },
      } as FastifyServerOptions)
    : http2
      ? Fastify({ ...base, serverFactory: h2cServer })
      : Fastify(base)) as unknown as FastifyInstance;
  // Headers are part of the request: they too must arrive within the deadline.
  if (arrival !== null && typeof app.server.headersTimeout === 'number')
    app.server.headersTimeout = Math.min(app.server.headersTimeout, arrival.timeout);
  if (demoFeed) {
    // The feed's subjects are records, unless the caller configured that pattern already.
    const records = pluginOptions.records ?? [];
    if (!records.some((r) => r.pattern === DEMO_PATTERN))
      pluginOptions.records = [...records, { pattern: DEMO_PATTERN }];
  }
  // A standalone server answers health and readiness checks; an embedding app opts in.
  pluginOptions.healthPath ??= STANDALONE_DEFAULTS.healthPath;
  pluginOptions.readyPath ??= STANDALONE_DEFAULTS.readyPath;
  await app.register(bayou, pluginOptions);
  if (feed !== null) {
    const running = new DemoFeed(app.bayou, feed);
    app.addHook('onClose', async () => running.close());
  }
  return {
    app,
    bayou: app.bayou,
    async listen() {
      await app.listen({ host, port });
      const address = app.server.address();
      const actual = typeof address === 'object' && address !== null ? address.port : port;
      const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      return `${https ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${actual}`;
    },
    // The paced drain first (readiness off, sessions ended over drainSpread), then the rest.
    close: async () => {
      await app.bayouDrain();
      await app.close();
    },
  };
}
