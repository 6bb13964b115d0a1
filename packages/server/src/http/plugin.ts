/**
 * The Fastify plugin: `app.register(bayou, options)` adds the Bayeux endpoint (both
 * transports on one path), `/healthz` (liveness), `/readyz` (readiness: 503 while the
 * engine cannot serve, e.g. Redis unreachable), `/metrics`, and `app.bayou`. Closing the app ends
 * sessions gracefully: what is queued goes out where it can, held connects are answered
 * `402::session_unknown` with `reconnect: handshake` and sockets closed with 1001, so
 * clients handshake again on another node (or here once the service is back) and recover
 * what they missed from the engine's history.
 *
 * It builds nothing itself: the composition root (`compose.ts`) builds the node and its
 * parts; this file maps them onto Fastify (routes, decorations, close hooks).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { NODE_SOURCES } from '../admin/node-stats.js';
import type { BayouApp } from '../bayou-app.js';
import { type ComposedNode, composeNode, type Endpoint } from '../compose.js';
import { NODE_OPERATIONS } from '../kernel/node-operations.js';
import type { ResolvedOptions } from '../options.js';
import { directEndpoint, TRUST_RULE_FASTIFY } from './direct-endpoint.js';
import type { BayouPluginOptions } from './plugin-options.js';

export { type BayouPluginOptions, engineFrom } from './plugin-options.js';

declare module 'fastify' {
  interface FastifyInstance {
    bayou: BayouApp;
    /**
     * The paced drain (call it before `app.close()`, as `createServer`'s `close()` and
     * `bayou start` on SIGTERM do): `/readyz` turns 503 and new handshakes are refused with
     * retry advice at once, then the node's sessions end spread over `spread` ms (default
     * `drainSpread`), each advised to handshake again after a random interval. `app.close()`
     * alone ends them at once. Resolves once the last has ended; idempotent.
     */
    bayouDrain(spread?: number): Promise<void>;
  }
}

/** Bayeux routes answer thousands of requests a second: only warnings and errors are logged. */
const ROUTE_LOG_LEVEL = 'warn';

/**
 * The endpoint's routes, in their own scope so that their body parsers stay out of the app.
 * Long-poll POSTs and EventSource GETs skip Fastify's per-request machinery when no app
 * hook can see them (`direct-endpoint.ts`).
 */
async function endpointRoutes(
  app: FastifyInstance,
  options: ResolvedOptions,
  parts: Endpoint,
): Promise<void> {
  const { ws, http, streams, closing, refuse } = parts;
  await app.register(
    async (scope) => {
      ws?.route(scope);
      if (http === null) return;
      await http.routes(scope);
      streams?.eventSource?.routes(scope);
      directEndpoint(app, scope, {
        path: options.path,
        serve: http.serveDirect,
        serveGet: streams?.eventSource?.serveDirect,
        closing,
        ...(refuse === undefined ? {} : { refuse }),
      });
    },
    { logLevel: ROUTE_LOG_LEVEL },
  );
}

const plugin: FastifyPluginAsync<BayouPluginOptions> = async (app: FastifyInstance, opts) => {
  const composed = await composeNode(app, opts);
  const { options, bayou, node } = composed;
  app.decorate('bayou', bayou);
  // The server API and the console (registered after this plugin) find the node's operations here.
  app.decorate(NODE_OPERATIONS, node.operations);
  app.decorate(NODE_SOURCES, composed.sources);
  app.decorate('bayouDrain', (spread: number = options.drainSpread) => composed.drain(spread));
  await endpointRoutes(app, options, composed.endpoint);
  statusRoutes(app, composed);
  const metrics = composed.metrics;
  if (metrics !== null && options.metricsPath !== false) {
    app.get(options.metricsPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
      reply.header('content-type', metrics.contentType);
      return metrics.metrics();
    });
  }
  app.addHook('preClose', async () => {
    await composed.stop();
  });
  app.addHook('onClose', async () => {
    await composed.close();
  });
};

/** The health check and the readiness check (`503` unless the node is ready), where configured. */
function statusRoutes(app: FastifyInstance, composed: ComposedNode): void {
  const { options, bayou } = composed;
  if (options.healthPath !== false) {
    app.get(options.healthPath, { logLevel: ROUTE_LOG_LEVEL }, async () => ({
      status: 'ok',
      sessions: bayou.sessionCount,
    }));
  }
  if (options.readyPath !== false) {
    app.get(options.readyPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
      const now = composed.status();
      reply.code(now === 'ready' ? 200 : 503);
      return { status: now };
    });
  }
}

export const bayou = fp(plugin, { name: '@bayou/server', fastify: `^${TRUST_RULE_FASTIFY}` });
