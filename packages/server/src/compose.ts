/**
 * The composition root: everything one Bayou node is made of, built once, in dependency
 * order, each collaborator through its constructor — the engine, the node
 * (`kernel/create-node.ts` builds its kernel side for this function and no one else), its
 * guard extensions, its transports, its webhooks, the counters the console and the metrics
 * read, the connection guard. Nothing here is written into anything after it is built.
 *
 * The Fastify plugin (`http/plugin.ts`) calls `composeNode` and only maps the result onto
 * Fastify: routes, decorations, close hooks. `createServer` builds the Fastify app the
 * plugin is registered on; `bayou start` calls `createServer`.
 */
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { NodeSources } from './admin/node-stats.js';
import type { createAuthHooks } from './auth/auth-hooks.js';
import type { BayouApp } from './bayou-app.js';
import { OrderedLongPolling } from './cluster/ordered-long-polling.js';
import type { Engine } from './engine/engine.js';
import { AuthExtension } from './extensions/auth-extension.js';
import { LimitsExtension } from './extensions/limits-extension.js';
import { ConnectionGuard } from './http/connection-guard.js';
import { createMetrics } from './http/metrics.js';
import { type BayouPluginOptions, resolvePluginOptions, startEngine } from './http/plugin-options.js';
import { type BayouNode, createNode } from './kernel/create-node.js';
import { Limiter } from './limits/limiter.js';
import type { ResolvedOptions } from './options.js';
import type { ProxyStats } from './proxy/proxy-backend.js';
import { connectionTypes } from './transports/carrier-kinds.js';
import { createHttpEndpoint, type HttpEndpoint } from './transports/http-endpoint.js';
import { createLongPolling } from './transports/long-polling.js';
import { OriginGuard } from './transports/origin-guard.js';
import { StreamsExtension } from './transports/stream-hub.js';
import { createStreams, type Streams, wantsStreams } from './transports/streams.js';
import { WebSocketTransport } from './transports/websocket.js';
import { attachWebhooks } from './webhooks/webhook-events.js';
import { WebhookSender } from './webhooks/webhook-sender.js';

/** The most a handshake refused while draining is told to wait (ms). */
const DRAIN_JITTER_MS = 1000;
/** How long a shutdown waits for the streams it relays to get their owners' last answers. */
const RELAY_DRAIN_MS = 1000;

/** The Bayeux endpoint's transports: what the plugin routes. */
export interface Endpoint {
  readonly ws: WebSocketTransport | null;
  readonly http: HttpEndpoint | null;
  readonly streams: Streams | null;
  /** Whether the node drains (the direct path then leaves requests to Fastify's close). */
  readonly closing: () => boolean;
  /** Refuses a connection past `maxConnections`, when set. */
  readonly refuse: ConnectionGuard['refuse'] | undefined;
}

/** One node, composed: what the plugin maps onto Fastify. */
export interface ComposedNode {
  readonly options: ResolvedOptions;
  readonly bayou: BayouApp;
  readonly node: BayouNode;
  readonly endpoint: Endpoint;
  /** The transports' and extensions' counters, for the console. */
  readonly sources: NodeSources;
  /** The Prometheus registry, when metrics are served or a registry was given. */
  readonly metrics: Registry | null;
  /** `/readyz`'s answer now. */
  status(): 'ready' | 'shutting down' | 'engine unavailable';
  /** The paced drain (`app.bayouDrain`): handshakes refused, sessions ended over `spread` ms; idempotent. */
  drain(spread: number): Promise<void>;
  /** Closing, first step: no new connections, the sessions ended, held requests and sockets answered. */
  stop(): Promise<void>;
  /** Closing, last step: the node leaves the engine, then the webhooks' last events go out. */
  close(): Promise<void>;
}

/** Builds the node `opts` describes on `app`'s server and starts it (joins the engine). */
export async function composeNode(app: FastifyInstance, opts: BayouPluginOptions): Promise<ComposedNode> {
  const { options, hooks, proxied, engine } = resolvePluginOptions(opts);
  // The token expiry's way to the node's sessions (the node is built just below).
  const security = securityExtensions(app, options, hooks, (clientId) => {
    const s = node.kernel.sessions.find(clientId);
    if (s !== undefined) node.kernel.sessions.remove(s, 'token-expired');
  });
  const streamsExtension = wantsStreams(options) ? new StreamsExtension() : null;
  // Every built-in extension, registered with the node's own in one place (run by stage).
  const node = createNode(options, app.log, engine, [
    ...(security.auth === null ? [] : [security.auth]),
    new LimitsExtension(security.limiter),
    // Behind a balancer, two responses of one long-polling session may cross: deliver in connect replies only.
    ...(engine.capabilities.multiNode ? [new OrderedLongPolling(connectionTypes)] : []),
    ...(streamsExtension === null ? [] : [streamsExtension]),
  ]);
  const { app: bayou, kernel } = node;
  const webhooks =
    options.webhooks === undefined ? null : new WebhookSender(options.webhooks, bayou.nodeId, app.log);
  if (webhooks !== null) attachWebhooks(bayou, webhooks);
  // The rpc backend answers what no handler of the app serves (the more specific one wins).
  if (proxied.rpc !== undefined) bayou.service('/service/**', proxied.rpc);
  // Long-polling also carries the POSTs of streaming sessions, and runs the batches other nodes forward here.
  const longPolling = options.transports.some((t) => t !== 'websocket')
    ? createLongPolling(kernel, options)
    : null;
  await startEngine(() => node.start(longPolling?.forwarded ?? null), engine, opts.redis);

  let draining = false;
  const ws = options.transports.includes('websocket')
    ? new WebSocketTransport(app, kernel, options, security.origins)
    : null;
  const securitySweep = startSecuritySweep(security.auth, security.limiter, options.sweepInterval);
  const streams = createStreams(kernel, options, security.origins, streamsExtension);
  // The HTTP transports, asked in order for each POST to the endpoint (long-polling last: it
  // takes the rest). Streams send everything but their deliveries on long-polling POSTs.
  const httpTransports =
    longPolling === null ? [] : [...(streams?.streaming ? [streams.streaming] : []), longPolling];
  const http =
    httpTransports.length > 0 ? createHttpEndpoint(kernel, options, httpTransports, security.origins) : null;
  // Connections past maxConnections are refused; idle ones closed by a shared sweep.
  const connections = guardConnections(app, options, (now) => ws?.sweep(now));
  const refuse = options.maxConnections > 0 ? connections.guard.refuse.bind(connections.guard) : undefined;
  const observed = { ws, streams, webhooks, guard: connections.guard, ...security };
  const metrics = await metricsOf(options, node, engine, observed, proxied.stats);
  let drained: Promise<void> | null = null;
  return {
    ...{ options, bayou, node },
    endpoint: { ws, http, streams, closing: () => draining, refuse },
    sources: sourcesOf(observed),
    metrics,
    status: () => (draining ? 'shutting down' : engine.ready() ? 'ready' : 'engine unavailable'),
    drain(spread) {
      drained ??= (() => {
        draining = true;
        node.refuseHandshakes(Math.min(spread, DRAIN_JITTER_MS));
        return node.drainForShutdown(spread);
      })();
      return drained;
    },
    async stop() {
      draining = true;
      clearInterval(securitySweep);
      connections.stop();
      await node.drainForShutdown();
      // Long-polls and streams relayed to other nodes: what their owners answer now goes out.
      await Promise.all([http?.drain(), streams?.hub.drainRelays(RELAY_DRAIN_MS)]);
      streams?.hub.close();
      ws?.closeAll(1001, 'server shutting down');
    },
    async close() {
      connections.stop();
      await ws?.close();
      await node.close();
      // After the kernel: its sessions' ends and vacated channels are the last events.
      await webhooks?.close();
    },
  };
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

/** The guard stage's extensions and what they share with the transports. */
interface Security {
  readonly limiter: Limiter;
  readonly auth: AuthExtension | null;
  readonly origins: OriginGuard;
}

/**
 * The built-in guards (stage `guard`, so before the ack extension whatever the order): the
 * auth extension first when tokens are on or long-polls must carry their session's cookie —
 * a message from a stranger naming someone's session is refused before anything counts it
 * against that session (the per-session publish rate) — then limits (registered in this
 * order by `composeNode`). A handshake has no session yet: auth lets it through at once, and
 * limits refuses a flood before the handshake handler verifies any token.
 */
function securityExtensions(
  app: FastifyInstance,
  options: ResolvedOptions,
  hooks: ReturnType<typeof createAuthHooks> | null,
  expire: (clientId: string) => void,
): Security {
  const limiter = new Limiter(options.limits);
  // One origin check for every transport: a refused origin is logged once (transports/origin-guard.ts).
  const origins = new OriginGuard(options.allowedOrigins, app.log);
  const tokensOn = hooks?.tokensOn === true;
  const auth = !tokensOn && options.trustClientSession ? null : authExtension(options, hooks, expire);
  return { limiter, auth, origins };
}

function authExtension(
  options: ResolvedOptions,
  hooks: ReturnType<typeof createAuthHooks> | null,
  expire: (clientId: string) => void,
): AuthExtension {
  const tokensOn = hooks?.tokensOn === true;
  return new AuthExtension({
    hooks: tokensOn ? hooks : null,
    expire: (session) => expire(session.id),
    trustClientSession: options.trustClientSession,
    tick: options.sweepInterval,
    ...(options.auth?.tokens?.clockTolerance !== undefined
      ? { clockTolerance: options.auth.tokens.clockTolerance }
      : {}),
  });
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

const NO_STREAMS = Object.freeze({ streaming: 0, eventsource: 0 });

/** What the console and the metrics read: the node's parts, each counting for itself. */
interface Observed extends Security {
  readonly guard: ConnectionGuard;
  readonly ws: WebSocketTransport | null;
  readonly streams: Streams | null;
  readonly webhooks: WebhookSender | null;
}

/** The console's sources (read only while someone watches). */
function sourcesOf(n: Observed): NodeSources {
  const { ws, streams, webhooks } = n;
  return {
    websockets: () => ws?.connections ?? 0,
    streams: () => streams?.hub.counts() ?? NO_STREAMS,
    limits: n.limiter.stats,
    webhooks: webhooks?.stats ?? null,
  };
}

/**
 * The Prometheus metrics, where asked (a path to serve them or a registry to fill);
 * prom-client (and the OpenTelemetry API it requires) loaded only then.
 */
async function metricsOf(
  options: ResolvedOptions,
  node: BayouNode,
  engine: Engine,
  n: Observed,
  proxy: ProxyStats | undefined,
): Promise<Registry | null> {
  if (options.metricsPath === false && options.metricsRegistry === undefined) return null;
  const { ws, streams, guard, limiter } = n;
  const security = {
    limits: limiter.stats,
    trackedIps: () => limiter.trackedIps,
    auth: n.auth?.stats ?? null,
    connections: {
      open: () => guard.stats.open,
      refused: () => guard.stats.refused,
      silentClosed: () => guard.stats.silentClosed,
      handshakeTimeouts: () => ws?.handshakeTimeouts ?? 0,
      heartbeatSockets: () => ws?.pings?.size ?? 0,
      heartbeatTimeouts: () => ws?.heartbeatTimeouts ?? 0,
    },
  };
  return createMetrics(
    node.app,
    node.kernel.stats,
    { websocket: () => ws?.connections ?? 0, streams: () => streams?.hub.counts() ?? NO_STREAMS },
    security,
    options.metricsRegistry,
    engine,
    { webhooks: n.webhooks?.stats, proxy },
  );
}
