/** The composition root for standalone use: a Fastify app with the Bayou plugin. */
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { BayouApp } from './bayou-app.js';
import { type BayouPluginOptions, bayou } from './http/plugin.js';
import { resolveTrustProxy, type TrustProxy } from './http/trust-proxy.js';
import { DEMO_PATTERN, DemoFeed, type DemoFeedOptions } from './records/demo-feed.js';

export interface CreateServerOptions extends BayouPluginOptions {
  /** Interface to listen on. Default `'0.0.0.0'`. */
  host?: string;
  /** Port; `0` picks a free one. Default `8080`. */
  port?: number;
  /** Fastify (pino) logger options, or `false`. Default `false`. */
  logger?: FastifyServerOptions['logger'];
  /** TLS key and certificate (PEM) to serve https and wss. Default: none. */
  https?: { key: string | Buffer; cert: string | Buffer };
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

export async function createServer(options: CreateServerOptions = {}): Promise<BayouServer> {
  const {
    host = '0.0.0.0',
    port = 8080,
    logger = false,
    https,
    demoFeed,
    trustProxy,
    ...pluginOptions
  } = options;
  const trusted = resolveTrustProxy(trustProxy);
  // A Comet endpoint answers thousands of polls a second: no per-request log lines.
  const base = {
    logger,
    logController: new LogController({ disableRequestLogging: true }),
    ...(trusted !== undefined ? { trustProxy: trusted } : {}),
  };
  const app = (https ? Fastify({ ...base, https }) : Fastify(base)) as unknown as FastifyInstance;
  if (demoFeed) {
    // The feed's subjects are records, unless the caller configured that pattern already.
    const records = pluginOptions.records ?? [];
    if (!records.some((r) => r.pattern === DEMO_PATTERN))
      pluginOptions.records = [...records, { pattern: DEMO_PATTERN }];
  }
  // A standalone server answers health and readiness checks; an embedding app opts in.
  pluginOptions.healthPath ??= '/healthz';
  pluginOptions.readyPath ??= '/readyz';
  await app.register(bayou, pluginOptions);
  if (demoFeed) {
    const feed = new DemoFeed(app.bayou, demoFeed === true ? {} : demoFeed);
    app.addHook('onClose', async () => feed.close());
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
    close: () => app.close(),
  };
}
