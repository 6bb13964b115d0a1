/**
 * The Fastify plugin: `app.register(bayou, options)` adds the Bayeux endpoint (both
 * transports on one path), `/healthz`, `/metrics`, and `app.bayou`. Closing the app ends
 * sessions gracefully: held connects are answered with `reconnect: retry` and sockets
 * closed with 1001, so clients reconnect to wherever the service comes back.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { BayouApp, kernelOf } from '../bayou-app.js';
import type { Engine } from '../engine/engine.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { type BayouOptions, resolveOptions } from '../options.js';
import { longPollingRoutes } from '../transports/long-polling.js';
import { WebSocketTransport } from '../transports/websocket.js';
import { createMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    bayou: BayouApp;
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
  const bayou = new BayouApp(options, app.log, engine ?? new MemoryEngine());
  const kernel = kernelOf(bayou);
  app.decorate('bayou', bayou);
  await kernel.start();

  const ws = options.transports.includes('websocket') ? new WebSocketTransport(app, kernel, options) : null;
  // The endpoint's routes live in their own scope, so their body parsers stay out of the app.
  await app.register(async (scope) => {
    ws?.route(scope);
    if (options.transports.includes('long-polling')) await longPollingRoutes(kernel, options)(scope);
  });

  if (options.healthPath !== false) {
    app.get(options.healthPath, async () => ({ status: 'ok', sessions: bayou.sessionCount }));
  }
  if (options.metricsPath !== false) {
    const registry = createMetrics(bayou, { websocket: () => ws?.connections ?? 0 });
    app.get(options.metricsPath, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  }

  app.addHook('preClose', async () => {
    kernel.drainForShutdown();
    ws?.closeAll(1001, 'server shutting down');
  });
  app.addHook('onClose', async () => {
    await ws?.close();
    await kernel.close();
  });
};
export const bayou = fp(plugin, { name: '@bayou/server', fastify: '5.x' });
