/**
 * The Fastify plugin: `app.register(bayou, options)` adds the Bayeux endpoint (both
 * transports on one path), `/healthz`, `/metrics`, and `app.bayou`. Closing the app ends
 * sessions gracefully: held connects are answered with `reconnect: retry` and sockets
 * closed with 1001, so clients reconnect to wherever the service comes back.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Bayou } from '../bayou.js';
import type { Engine } from '../engine/engine.js';
import { type BayouOptions, resolveOptions } from '../options.js';
import { longPollingRoutes } from '../transports/long-polling.js';
import { WebSocketTransport } from '../transports/websocket.js';
import { createMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    bayou: Bayou;
  }
}

export interface BayouPluginOptions extends BayouOptions {
  /** Delivery between nodes. Default: the in-process memory engine. */
  engine?: Engine;
}

// Keys Fastify itself may pass along with register() options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);

const plugin: FastifyPluginAsync<BayouPluginOptions> = async (app: FastifyInstance, opts) => {
  const { engine, ...rest } = opts;
  const own = Object.fromEntries(Object.entries(rest).filter(([k]) => !REGISTER_KEYS.has(k)));
  const options = resolveOptions(own);
  const bayou = new Bayou(options, app.log, engine);
  app.decorate('bayou', bayou);
  await bayou.start();

  const ws = options.transports.includes('websocket') ? new WebSocketTransport(app, bayou, options) : null;
  // The endpoint's routes live in their own scope, so their body parsers stay out of the app.
  await app.register(async (scope) => {
    ws?.route(scope);
    if (options.transports.includes('long-polling')) await longPollingRoutes(bayou, options)(scope);
  });

  if (options.healthPath !== false) {
    app.get(options.healthPath, async () => ({ status: 'ok', sessions: bayou.sessionCount }));
  }
  if (options.metricsPath !== false) {
    const registry = createMetrics(bayou, {
      websocket: () => ws?.connections ?? 0,
      longPolling: () => {
        let n = 0;
        for (const s of bayou.registry.values()) if (s.held?.poll) n++;
        return n;
      },
    });
    app.get(options.metricsPath, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  }

  app.addHook('preClose', async () => {
    bayou.registry.stopSweeping();
    for (const session of bayou.registry.values()) {
      if (session.held !== null) bayou.completeConnect(session, { reconnect: 'retry', interval: 0 });
      bayou.outbound.flush(session);
    }
    ws?.closeAll(1001, 'server shutting down');
  });
  app.addHook('onClose', async () => {
    await ws?.close();
    await bayou.close();
  });
};

export const bayou = fp(plugin, { name: '@bayou/server', fastify: '5.x' });
