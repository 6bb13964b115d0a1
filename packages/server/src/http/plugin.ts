/**
 * The Fastify plugin: `app.register(bayou, options)` adds the Bayeux endpoint (both
 * transports on one path), `/healthz` (liveness), `/readyz` (readiness: 503 while the
 * engine cannot serve, e.g. Redis unreachable), `/metrics`, and `app.bayou`. Closing the app ends
 * sessions gracefully: what is queued goes out where it can, held connects are answered
 * `402::session_unknown` with `reconnect: handshake` and sockets closed with 1001, so
 * clients handshake again on another node (or here once the service is back) and recover
 * what they missed from the engine's history.
 */
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { RedisOptions } from 'ioredis';
import { registerSources } from '../admin/node-stats.js';
import { type AuthOptions, createAuthHooks } from '../auth/auth-hooks.js';
import type { BayouApp } from '../bayou-app.js';
import { OrderedLongPolling } from '../cluster/ordered-long-polling.js';
import type { Engine } from '../engine/engine.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { RedisEngine } from '../engine/redis/redis-engine.js';
import type { RedisEngineOptions } from '../engine/redis/redis-options.js';
import { BayouEngineError } from '../errors.js';
import { AuthExtension } from '../extensions/auth-extension.js';
import { LimitsExtension } from '../extensions/limits-extension.js';
import { createNode } from '../kernel/create-node.js';
import type { ServiceHandler } from '../kernel/events.js';
import { NODE_OPERATIONS } from '../kernel/node-operations.js';
import { Limiter } from '../limits/limiter.js';
import { optionProblem } from '../option-errors.js';
import { type BayouOptions, defaultOptions, type ResolvedOptions, resolveOptions } from '../options.js';
import { emptyProxyStats, type ProxyStats } from '../proxy/proxy-backend.js';
import { createProxyHooks } from '../proxy/proxy-hooks.js';
import { createHttpEndpoint } from '../transports/http-endpoint.js';
import { createLongPolling } from '../transports/long-polling.js';
import { createStreams } from '../transports/streams.js';
import { WebSocketTransport } from '../transports/websocket.js';
import { attachWebhooks } from '../webhooks/webhook-events.js';
import { WebhookSender } from '../webhooks/webhook-sender.js';
import { ConnectionGuard } from './connection-guard.js';
import { directEndpoint, TRUST_RULE_FASTIFY } from './direct-endpoint.js';
import { createMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    bayou: BayouApp;
  }
}

export interface BayouPluginOptions extends BayouOptions {
  /** Delivery between nodes. Default: the in-process memory engine (or a Redis engine with `redis`). */
  engine?: Engine;
  /**
   * Join a cluster on this Redis: a `redis://` or `rediss://` (TLS) URL, or ioredis
   * connection options. Builds a `RedisEngine`; not together with `engine`. Default: none.
   */
  redis?: string | RedisOptions;
  /**
   * Further options of the engine that `redis` builds (`keyPrefix`, `heartbeatMs`,
   * `nodeTtlMs`…; see docs/cluster.md). Default: the engine's defaults.
   */
  redisEngine?: Omit<RedisEngineOptions, 'url' | 'redis'>;
}

// Keys Fastify itself may pass along with register() options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);
/** Bayeux routes answer thousands of requests a second: only warnings and errors are logged. */
const ROUTE_LOG_LEVEL = 'warn';

/** With `auth`, the token and permission hooks wrap the application's own. */
function withAuthHooks(options: ResolvedOptions): {
  options: ResolvedOptions;
  hooks: ReturnType<typeof createAuthHooks> | null;
} {
  if (options.auth === undefined) return { options, hooks: null };
  const input: AuthOptions = { ...options.auth };
  if (options.authenticate !== undefined) input.authenticate = options.authenticate;
  if (options.canSubscribe !== undefined) input.canSubscribe = options.canSubscribe;
  if (options.canPublish !== undefined) input.canPublish = options.canPublish;
  const hooks = createAuthHooks(input);
  const next: Record<string, unknown> = { ...options };
  for (const name of ['authenticate', 'canSubscribe', 'canPublish'] as const) {
    if (hooks[name] === undefined) delete next[name];
    else next[name] = hooks[name];
  }
  return { options: Object.freeze(next) as ResolvedOptions, hooks };
}

/** With `proxy`, the backend's hooks run after those in place (tokens, rules, the app's). */
function withProxyHooks(options: ResolvedOptions): {
  options: ResolvedOptions;
  rpc: ServiceHandler | undefined;
  stats: ProxyStats | undefined;
} {
  if (options.proxy === undefined) return { options, rpc: undefined, stats: undefined };
  const stats = emptyProxyStats();
  const hooks = createProxyHooks(options.proxy, options, stats);
  const next: Record<string, unknown> = { ...options };
  for (const name of ['authenticate', 'canSubscribe', 'canPublish'] as const) {
    if (hooks[name] === undefined) delete next[name];
    else next[name] = hooks[name];
  }
  return { options: Object.freeze(next) as ResolvedOptions, rpc: hooks.rpc, stats };
}

/**
 * The engine the options ask for: `engine`, a Redis engine built from `redis`, or memory;
 * a built engine bounds its history by `history` (the cap, the TTL of an idle channel).
 */
export function engineFrom(
  opts: Pick<BayouPluginOptions, 'engine' | 'redis' | 'redisEngine'>,
  history: Pick<ResolvedOptions, 'historyChannels' | 'historyTtl' | 'sweepInterval'> = defaultOptions,
): Engine {
  const { engine, redis, redisEngine: given } = opts;
  if (engine !== undefined && redis !== undefined)
    optionProblem(
      'options "engine" and "redis" exclude each other: give an engine, or a Redis to build one on',
    );
  if (given !== undefined && redis === undefined)
    optionProblem('option "redisEngine" needs "redis" (the Redis the engine connects to)');
  if (redis === undefined)
    return (
      engine ??
      new MemoryEngine({
        historyChannels: history.historyChannels,
        historyTtl: history.historyTtl,
        sweepInterval: history.sweepInterval,
      })
    );
  // An idle channel's epoch goes with its messages unless told otherwise: no key outlives the TTL.
  const redisEngine = {
    epochTtlMs: Math.max(1, history.historyTtl),
    historyChannels: history.historyChannels,
    ...given,
  };
  if (typeof redis === 'string') {
    if (!/^(rediss?|redis\+sentinel):\/\/./.test(redis))
      optionProblem(
        `option "redis" must be a redis://, rediss:// or redis+sentinel:// URL or ioredis options, got "${redis}"`,
      );
    return new RedisEngine({ ...redisEngine, url: redis });
  }
  if (typeof redis !== 'object' || redis === null || Array.isArray(redis))
    optionProblem(
      'option "redis" must be a redis://, rediss:// or redis+sentinel:// URL or an ioredis options object',
    );
  return new RedisEngine({ ...redisEngine, redis });
}

/**
 * The connection guard of `app`'s server and the sweep that closes idle connections —
 * silent ones and, through `sweepWebSockets`, WebSockets without a handshake — in small
 * steps (every 100 ms at most): a flood's worth falling due within one second costs ten
 * short turns, not one long one. One shared timer, none per socket.
 */
function guardConnections(
  app: FastifyInstance,
  options: ResolvedOptions,
  sweepWebSockets: (now: number) => void,
): { guard: ConnectionGuard; stop(): void } {
  const guard = new ConnectionGuard(
    app.server,
    {
      maxConnections: options.maxConnections,
      handshakeTimeout: options.handshakeTimeout,
      maxConnectionsPerIp: options.maxConnectionsPerIp,
    },
    app.server instanceof TlsServer,
  );
  if (options.handshakeTimeout === 0) return { guard, stop: () => guard.close() };
  const timer = setInterval(
    () => {
      const now = Date.now();
      guard.sweep(now);
      sweepWebSockets(now);
    },
    Math.min(options.sweepInterval, 100),
  );
  timer.unref();
  return {
    guard,
    stop: () => {
      clearInterval(timer);
      guard.close();
    },
  };
}

const plugin: FastifyPluginAsync<BayouPluginOptions> = async (app: FastifyInstance, opts) => {
  const { engine: given, redis, redisEngine, ...rest } = opts;
  if ((opts as { prefix?: unknown }).prefix !== undefined) {
    // fastify-plugin shares the parent's scope, where Fastify ignores `prefix` silently.
    optionProblem(
      `the Bayou plugin does not take Fastify's "prefix" (got ${JSON.stringify((opts as { prefix?: unknown }).prefix)}): set its "path" option instead, e.g. { path: '/api/bayeux' }, and "metricsPath"/"healthPath" for the other routes`,
    );
  }
  const own = Object.fromEntries(Object.entries(rest).filter(([k]) => !REGISTER_KEYS.has(k)));
  const authed = withAuthHooks(resolveOptions(own));
  const hooks = authed.hooks;
  const proxied = withProxyHooks(authed.options);
  const options = proxied.options;
  const engine = engineFrom({ engine: given, redis, redisEngine }, options);
  const node = createNode(options, app.log, engine);
  const { app: bayou, kernel } = node;
  // Behind a balancer, two responses of one long-polling session may cross: deliver in connect replies only.
  if (!(engine instanceof MemoryEngine)) bayou.addExtension(new OrderedLongPolling());
  app.decorate('bayou', bayou);
  // The server API and the console (registered after this plugin) find the node's operations here.
  app.decorate(NODE_OPERATIONS, node.operations);
  const webhooks =
    options.webhooks === undefined ? null : new WebhookSender(options.webhooks, bayou.nodeId, app.log);
  if (webhooks !== null) attachWebhooks(bayou, webhooks);
  // The rpc backend answers what no handler of the app serves (the more specific one wins).
  if (proxied.rpc !== undefined) bayou.service('/service/**', proxied.rpc);

  // Built-in extensions, after the ack extension: limits first (before any token is verified).
  const limiter = new Limiter(options.limits);
  bayou.addExtension(new LimitsExtension(limiter));
  const tokensOn = hooks?.tokensOn === true;
  const auth =
    tokensOn || !options.trustClientSession
      ? new AuthExtension({
          hooks: tokensOn ? hooks : null,
          expire: (session) => {
            const s = kernel.findSession(session.id);
            if (s !== undefined) kernel.removeSession(s, 'token-expired');
          },
          trustClientSession: options.trustClientSession,
          tick: options.sweepInterval,
          ...(options.auth?.tokens?.clockTolerance !== undefined
            ? { clockTolerance: options.auth.tokens.clockTolerance }
            : {}),
        })
      : null;
  if (auth !== null) bayou.addExtension(auth);
  // Long-polling also carries the POSTs of streaming sessions, and runs the batches other nodes forward here.
  const longPolling = options.transports.some((t) => t !== 'websocket')
    ? createLongPolling(kernel, options)
    : null;
  try {
    await node.start(longPolling?.forwarded ?? null);
  } catch (err) {
    const where = typeof redis === 'string' ? redis.replace(/\/\/[^@/]*@/, '//***@') : 'Redis';
    if (engine instanceof RedisEngine)
      throw new BayouEngineError(`cannot join the cluster on ${where}: ${(err as Error).message}`);
    throw err;
  }
  let draining = false;

  const ws = options.transports.includes('websocket') ? new WebSocketTransport(app, kernel, options) : null;
  // One shared timer for token expiries and forgetting idle IPs; none per session.
  let sweeps = 0;
  const securitySweep = setInterval(() => {
    auth?.sweep();
    if (++sweeps % 60 === 0) limiter.prune();
  }, options.sweepInterval);
  securitySweep.unref();
  const streams = createStreams(kernel, options);
  if (streams !== null) bayou.addExtension(streams.hub.extension);
  // The HTTP transports, asked in order for each POST to the endpoint (long-polling last: it
  // takes the rest). Streams send everything but their deliveries on long-polling POSTs.
  const httpTransports =
    longPolling === null ? [] : [...(streams?.streaming ? [streams.streaming] : []), longPolling];
  const http = httpTransports.length > 0 ? createHttpEndpoint(kernel, options, httpTransports) : null;
  // Connections past maxConnections are refused; idle ones closed by a shared sweep.
  const connections = guardConnections(app, options, (now) => ws?.sweep(now));
  // The endpoint's routes live in their own scope, so their body parsers stay out of the app.
  await app.register(
    async (scope) => {
      ws?.route(scope);
      if (http === null) return;
      await http.routes(scope);
      streams?.eventSource?.routes(scope);
      // Long-poll POSTs skip Fastify's per-request machinery when no app hook can see them.
      directEndpoint(app, scope, {
        path: options.path,
        serve: http.serveDirect,
        closing: () => draining,
        ...(options.maxConnections > 0 ? { refuse: (req, res) => connections.guard.refuse(req, res) } : {}),
      });
    },
    { logLevel: ROUTE_LOG_LEVEL },
  );

  if (options.healthPath !== false) {
    app.get(options.healthPath, { logLevel: ROUTE_LOG_LEVEL }, async () => ({
      status: 'ok',
      sessions: bayou.sessionCount,
    }));
  }
  if (options.readyPath !== false) {
    app.get(options.readyPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
      const ready = !draining && engine.ready();
      reply.code(ready ? 200 : 503);
      return { status: ready ? 'ready' : draining ? 'shutting down' : 'engine unavailable' };
    });
  }
  const security = {
    limits: limiter.stats,
    trackedIps: () => limiter.trackedIps,
    auth: auth?.stats ?? null,
    connections: {
      open: () => connections.guard.stats.open,
      refused: () => connections.guard.stats.refused,
      silentClosed: () => connections.guard.stats.silentClosed,
      handshakeTimeouts: () => ws?.handshakeTimeouts ?? 0,
    },
  };
  // The operator's console reads the same counters, only while someone watches.
  registerSources(bayou, {
    websockets: () => ws?.connections ?? 0,
    limits: limiter.stats,
    webhooks: webhooks?.stats ?? null,
  });
  if (options.metricsPath !== false || options.metricsRegistry !== undefined) {
    const registry = createMetrics(
      bayou,
      (observe) => kernel.stats.observeServiceTimes(observe),
      { websocket: () => ws?.connections ?? 0, streams: () => streams?.hub.counts() ?? NO_STREAMS },
      security,
      options.metricsRegistry,
      engine,
      { webhooks: webhooks?.stats, proxy: proxied.stats },
    );
    if (options.metricsPath !== false) {
      app.get(options.metricsPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
        reply.header('content-type', registry.contentType);
        return registry.metrics();
      });
    }
  }

  app.addHook('preClose', async () => {
    draining = true;
    clearInterval(securitySweep);
    connections.stop();
    node.drainForShutdown();
    http?.drain();
    streams?.hub.close();
    ws?.closeAll(1001, 'server shutting down');
  });
  app.addHook('onClose', async () => {
    connections.stop();
    await ws?.close();
    await node.close();
    // After the kernel: its sessions' ends and vacated channels are the last events.
    await webhooks?.close();
  });
};
const NO_STREAMS = Object.freeze({ streaming: 0, eventsource: 0 });

export const bayou = fp(plugin, { name: '@bayou/server', fastify: `^${TRUST_RULE_FASTIFY}` });
