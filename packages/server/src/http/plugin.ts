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
import { NODE_SOURCES } from '../admin/node-stats.js';
import type { createAuthHooks } from '../auth/auth-hooks.js';
import type { BayouApp } from '../bayou-app.js';
import { OrderedLongPolling } from '../cluster/ordered-long-polling.js';
import type { Engine } from '../engine/engine.js';
import { AuthExtension } from '../extensions/auth-extension.js';
import { LimitsExtension } from '../extensions/limits-extension.js';
import { Admission } from '../kernel/admission.js';
import { createNode } from '../kernel/create-node.js';
import type { Kernel } from '../kernel/kernel.js';
import { NODE_OPERATIONS } from '../kernel/node-operations.js';
import { Limiter } from '../limits/limiter.js';
import type { ResolvedOptions } from '../options.js';
import type { ProxyStats } from '../proxy/proxy-backend.js';
import { createHttpEndpoint, type HttpEndpoint } from '../transports/http-endpoint.js';
import { createLongPolling } from '../transports/long-polling.js';
import { OriginGuard } from '../transports/origin-guard.js';
import { createStreams, type Streams } from '../transports/streams.js';
import { WebSocketTransport } from '../transports/websocket.js';
import { attachWebhooks } from '../webhooks/webhook-events.js';
import { WebhookSender } from '../webhooks/webhook-sender.js';
import { ConnectionGuard } from './connection-guard.js';
import { type DirectEndpointOptions, directEndpoint, TRUST_RULE_FASTIFY } from './direct-endpoint.js';
import { createMetrics } from './metrics.js';
import { type BayouPluginOptions, resolvePluginOptions, startEngine } from './plugin-options.js';

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

/** The most a handshake refused while draining is told to wait (ms). */
const DRAIN_JITTER_MS = 1000;

/** Bayeux routes answer thousands of requests a second: only warnings and errors are logged. */
const ROUTE_LOG_LEVEL = 'warn';

/** What serves the endpoint: its transports, and when to leave requests to Fastify. */
interface EndpointParts {
  readonly ws: WebSocketTransport | null;
  readonly http: HttpEndpoint | null;
  readonly streams: Streams | null;
  readonly closing: () => boolean;
  readonly refuse: DirectEndpointOptions['refuse'];
}

/**
 * The endpoint's routes, in their own scope so that their body parsers stay out of the app.
 * Long-poll POSTs and EventSource GETs skip Fastify's per-request machinery when no app
 * hook can see them (`direct-endpoint.ts`).
 */
async function endpointRoutes(
  app: FastifyInstance,
  options: ResolvedOptions,
  parts: EndpointParts,
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

/**
 * The node's handshake gate (`maxHandshakeRate`) and `app.bayouDrain`: the paced drain turns
 * the node not ready (`draining`), refuses handshakes with retry advice, and ends the
 * sessions over `drainSpread`.
 */
function admitHandshakes(
  app: FastifyInstance,
  options: ResolvedOptions,
  node: ReturnType<typeof createNode>,
  draining: () => void,
): void {
  const admission = new Admission(options.maxHandshakeRate);
  node.kernel.taps.admission = admission;
  let drained: Promise<void> | null = null;
  app.decorate('bayouDrain', (spread: number = options.drainSpread) => {
    drained ??= (() => {
      draining();
      admission.drain(Math.min(spread, DRAIN_JITTER_MS));
      return node.drainForShutdown(spread);
    })();
    return drained;
  });
}

const plugin: FastifyPluginAsync<BayouPluginOptions> = async (app: FastifyInstance, opts) => {
  const { options, hooks, proxied, engine } = resolvePluginOptions(opts);
  const node = createNode(options, app.log, engine);
  const { app: bayou, kernel } = node;
  // Behind a balancer, two responses of one long-polling session may cross: deliver in connect replies only.
  if (engine.capabilities.multiNode) bayou.addExtension(new OrderedLongPolling());
  app.decorate('bayou', bayou);
  // The server API and the console (registered after this plugin) find the node's operations here.
  app.decorate(NODE_OPERATIONS, node.operations);
  const webhooks =
    options.webhooks === undefined ? null : new WebhookSender(options.webhooks, bayou.nodeId, app.log);
  if (webhooks !== null) attachWebhooks(bayou, webhooks);
  // The rpc backend answers what no handler of the app serves (the more specific one wins).
  if (proxied.rpc !== undefined) bayou.service('/service/**', proxied.rpc);

  const { limiter, auth, origins } = addSecurityExtensions(bayou, kernel, options, hooks);
  // Long-polling also carries the POSTs of streaming sessions, and runs the batches other nodes forward here.
  const longPolling = options.transports.some((t) => t !== 'websocket')
    ? createLongPolling(kernel, options)
    : null;
  await startEngine(() => node.start(longPolling?.forwarded ?? null), engine, opts.redis);
  let draining = false;
  admitHandshakes(app, options, node, () => (draining = true));

  const ws = options.transports.includes('websocket')
    ? new WebSocketTransport(app, kernel, options, origins)
    : null;
  const securitySweep = startSecuritySweep(auth, limiter, options.sweepInterval);
  const streams = createStreams(kernel, options, origins);
  if (streams !== null) bayou.addExtension(streams.hub.extension);
  // The HTTP transports, asked in order for each POST to the endpoint (long-polling last: it
  // takes the rest). Streams send everything but their deliveries on long-polling POSTs.
  const httpTransports =
    longPolling === null ? [] : [...(streams?.streaming ? [streams.streaming] : []), longPolling];
  const http =
    httpTransports.length > 0 ? createHttpEndpoint(kernel, options, httpTransports, origins) : null;
  // Connections past maxConnections are refused; idle ones closed by a shared sweep.
  const connections = guardConnections(app, options, (now) => ws?.sweep(now));
  const refuse = options.maxConnections > 0 ? connections.guard.refuse.bind(connections.guard) : undefined;
  await endpointRoutes(app, options, { ws, http, streams, closing: () => draining, refuse });

  statusRoutes(app, options, bayou, () =>
    draining ? 'shutting down' : engine.ready() ? 'ready' : 'engine unavailable',
  );
  observeNode(app, options, {
    bayou,
    kernel,
    engine,
    limiter,
    auth,
    guard: connections.guard,
    ws,
    streams,
    webhooks,
    proxyStats: proxied.stats,
  });
  app.addHook('preClose', async () => {
    draining = true;
    clearInterval(securitySweep);
    connections.stop();
    await node.drainForShutdown();
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

/**
 * The built-in guards (stage `guard`, so before the ack extension whatever the order): the
 * auth extension first when tokens are on or long-polls must carry their session's cookie —
 * a message from a stranger naming someone's session is refused before anything counts it
 * against that session (the per-session publish rate) — then limits. A handshake has no
 * session yet: auth lets it through at once, and limits refuses a flood before the handshake
 * handler verifies any token.
 */
function addSecurityExtensions(
  bayou: BayouApp,
  kernel: Kernel,
  options: ResolvedOptions,
  hooks: ReturnType<typeof createAuthHooks> | null,
): { limiter: Limiter; auth: AuthExtension | null; origins: OriginGuard } {
  const limiter = new Limiter(options.limits);
  // One origin check for every transport: a refused origin is logged once (transports/origin-guard.ts).
  const origins = new OriginGuard(options.allowedOrigins, kernel.log);
  const tokensOn = hooks?.tokensOn === true;
  const auth = !tokensOn && options.trustClientSession ? null : authExtension(kernel, options, hooks);
  if (auth !== null) bayou.addExtension(auth);
  bayou.addExtension(new LimitsExtension(limiter));
  return { limiter, auth, origins };
}

function authExtension(
  kernel: Kernel,
  options: ResolvedOptions,
  hooks: ReturnType<typeof createAuthHooks> | null,
): AuthExtension {
  const tokensOn = hooks?.tokensOn === true;
  return new AuthExtension({
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
  });
}

/** The health check and the readiness check (`503` unless `status()` is `'ready'`), where configured. */
function statusRoutes(
  app: FastifyInstance,
  options: Pick<ResolvedOptions, 'healthPath' | 'readyPath'>,
  bayou: BayouApp,
  status: () => 'ready' | 'shutting down' | 'engine unavailable',
): void {
  if (options.healthPath !== false) {
    app.get(options.healthPath, { logLevel: ROUTE_LOG_LEVEL }, async () => ({
      status: 'ok',
      sessions: bayou.sessionCount,
    }));
  }
  if (options.readyPath !== false) {
    app.get(options.readyPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
      const now = status();
      reply.code(now === 'ready' ? 200 : 503);
      return { status: now };
    });
  }
}

/** One shared timer for token expiries and forgetting idle IPs; none per session. */
function startSecuritySweep(auth: AuthExtension | null, limiter: Limiter, every: number): NodeJS.Timeout {
  let sweeps = 0;
  const timer = setInterval(() => {
    auth?.sweep();
    if (++sweeps % 60 === 0) limiter.prune();
  }, every);
  timer.unref();
  return timer;
}

/** What the console and the metrics read: the node's parts, each counting for itself. */
interface Observed {
  bayou: BayouApp;
  kernel: Kernel;
  engine: Engine;
  limiter: Limiter;
  auth: AuthExtension | null;
  guard: ConnectionGuard;
  ws: WebSocketTransport | null;
  streams: ReturnType<typeof createStreams>;
  webhooks: WebhookSender | null;
  proxyStats: ProxyStats | undefined;
}

/** The console's sources (read only while someone watches) and, where asked, the Prometheus metrics. */
function observeNode(app: FastifyInstance, options: ResolvedOptions, n: Observed): void {
  const { bayou, limiter, guard, ws, streams, webhooks } = n;
  app.decorate(NODE_SOURCES, {
    websockets: () => ws?.connections ?? 0,
    streams: () => streams?.hub.counts() ?? NO_STREAMS,
    limits: limiter.stats,
    webhooks: webhooks?.stats ?? null,
  });
  if (options.metricsPath === false && options.metricsRegistry === undefined) return;
  const security = {
    limits: limiter.stats,
    trackedIps: () => limiter.trackedIps,
    auth: n.auth?.stats ?? null,
    connections: {
      open: () => guard.stats.open,
      refused: () => guard.stats.refused,
      silentClosed: () => guard.stats.silentClosed,
      handshakeTimeouts: () => ws?.handshakeTimeouts ?? 0,
    },
  };
  const registry = createMetrics(
    bayou,
    n.kernel.stats,
    { websocket: () => ws?.connections ?? 0, streams: () => streams?.hub.counts() ?? NO_STREAMS },
    security,
    options.metricsRegistry,
    n.engine,
    { webhooks: webhooks?.stats, proxy: n.proxyStats },
  );
  if (options.metricsPath === false) return;
  app.get(options.metricsPath, { logLevel: ROUTE_LOG_LEVEL }, async (_req, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}

export const bayou = fp(plugin, { name: '@bayou/server', fastify: `^${TRUST_RULE_FASTIFY}` });
