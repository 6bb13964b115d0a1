/**
 * The composition root of one node: builds every collaborator of the kernel once, in
 * dependency order, and hands each what it needs through its constructor. No object here
 * is changed after it is built; where two collaborators need each other (a session's
 * host ends it, and ending it reaches the registry that made it), the later one is
 * reached through a closure of this function, not a field written afterwards.
 *
 * The plugin (`http/plugin.ts`) calls `createNode`, builds the transports on `node.kernel`,
 * and starts the node with the long-polling transport's handler for forwarded batches.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { presencePatterns } from '../auth/channel-rules.js';
import { type Extension, ExtensionPipeline } from '../bayeux/extensions.js';
import { type AppPort, BayouApp, type BayouStats } from '../bayou-app.js';
import { SubscriptionIndex } from '../channels/subscription-index.js';
import { DeltaExtension } from '../delta/delta-extension.js';
import type { Engine } from '../engine/engine.js';
import { AckExtension } from '../extensions/ack-extension.js';
import { ReplayExtension } from '../extensions/replay-extension.js';
import type { ResolvedOptions } from '../options.js';
import { ProviderRegistry } from '../records/provider-registry.js';
import { RecordStore } from '../records/record-store.js';
import { Outbound } from '../session/outbound.js';
import type { Session } from '../session/session.js';
import { SessionRegistry } from '../session/session-registry.js';
import { connectionTypes } from '../transports/carrier-kinds.js';
import { DEAD_NODE_SWEEP_MS } from '../webhooks/webhook-options.js';
import { AdminOps } from './admin-ops.js';
import { Admission } from './admission.js';
import { ChannelOccupancy } from './channel-occupancy.js';
import { ChannelOps } from './channel-ops.js';
import { ClusterLink, inboxOf } from './cluster-link.js';
import { Connects } from './connects.js';
import { Guards } from './guards.js';
import { HistoryRules } from './history-rules.js';
import { Kernel } from './kernel.js';
import { KernelStats } from './kernel-stats.js';
import { MessageTracing, tracingInstalled } from './message-tracing.js';
import { type ForwardHandler, NodeInbound } from './node-inbound.js';
import { FORWARD_MARGIN_MS, NodeLink } from './node-link.js';
import type { NodeOperations } from './node-operations.js';
import { NodeTaps } from './node-taps.js';
import { PRESENCE_SERVICE, presenceService } from './presence-service.js';
import { PresenceTracker } from './presence-tracker.js';
import { Publisher } from './publisher.js';
import { ServiceRegistry } from './service-registry.js';
import { SessionEnds } from './session-ends.js';
import { SessionHandovers } from './session-handover.js';
import { Subscriptions } from './subscriptions.js';

/** One node, built: its facade, its kernel (for the transports), its operator surface. */
export interface BayouNode {
  readonly app: BayouApp;
  readonly kernel: Kernel;
  readonly operations: NodeOperations;
  /** Joins the engine; `forwarded` runs batches other nodes forward here (none without long-polling). */
  start(forwarded: ForwardHandler | null): Promise<void>;
  /** The paced drain's first step: every handshake from now on is refused, told to come back within `jitter` ms. */
  refuseHandshakes(jitter: number): void;
  /** Graceful shutdown, first step: every session of this node ends, over `spread` ms (see `SessionEnds`). */
  drainForShutdown(spread?: number): Promise<void>;
  /** Last step: leaves the engine once the sessions' presence and channels are settled. */
  close(): Promise<void>;
}

/** The collaborators every stage below shares, built first (they need nothing of the sessions). */
interface Base {
  readonly options: ResolvedOptions;
  readonly log: FastifyBaseLogger;
  readonly engine: Engine;
  readonly nodeId: string;
  readonly stats: KernelStats;
  /** Spans of traced messages, when an OpenTelemetry SDK was installed before the node was built. */
  readonly tracing: MessageTracing | null;
  readonly taps: NodeTaps;
  readonly cluster: ClusterLink;
  readonly extensions: ExtensionPipeline;
  readonly services: ServiceRegistry;
  readonly index: SubscriptionIndex;
  readonly records: RecordStore;
  readonly providers: ProviderRegistry;
  readonly publisher: Publisher;
  /** A live session of this node (reaches the registry built later). */
  findSession(clientId: unknown): Session | undefined;
}

/**
 * The node's kernel side. `builtIn`: the built-in extensions the composition root made
 * (guards, ordered long-polling, streams), registered here with the protocol's own — one
 * place; the pipeline runs them by stage (`bayeux/extensions.ts`), the app's come later.
 */
export function createNode(
  options: ResolvedOptions,
  log: FastifyBaseLogger,
  engine: Engine,
  builtIn: readonly Extension[] = [],
): BayouNode {
  const base = buildBase(options, log, engine, {
    findSession: (clientId) => sessions.findSession(clientId),
    link: () => operator.control,
    handovers: () => handovers,
  });
  const app = new BayouApp(
    appPort(
      base,
      () => sessions,
      () => occupancy.activate(),
    ),
  );
  const guards = new Guards(log, app, base.stats);
  const presence = new PresenceTracker(presencePatterns(options.auth?.channels), {
    engine,
    log,
    engineCall: (call, undo) => guards.engineCall(call, undo),
    emitSafe: (run) => guards.emitSafe(run),
  });
  if (presence.enabled) base.services.set(PRESENCE_SERVICE, presenceService(presence, options.canSubscribe));
  // Counted always, reported to the engine once webhooks or a listener want the events.
  const occupancy = new ChannelOccupancy(
    engine.presence,
    (change, channel) => guards.emitSafe((e) => e.emit(`channel:${change}`, channel)),
    log,
    options.webhooks?.deadNodeSweep ?? DEAD_NODE_SWEEP_MS,
    options.webhooks !== undefined,
  );
  const { index, records, providers, extensions, broker } = { ...base, broker: engine.broker };
  const subscriptions = new Subscriptions(index, records, providers, broker, extensions, guards, occupancy);
  const sessions = buildSessions(base, { guards, presence, subscriptions, handovers: () => handovers });
  for (const extension of [...sessions.protocol, ...builtIn]) extensions.add(extension);
  const channels = new ChannelOps(subscriptions, presence, records, extensions);
  const handovers = buildHandovers(base, sessions, channels);
  const kernel = new Kernel({
    ...base,
    ...sessions,
    ...{ app, guards, channels, handovers },
    sessions: { find: sessions.findSession, remove: (s, reason) => sessions.ends.removeSession(s, reason) },
    kicked: (clientId) => operator.admin.kicked(clientId),
  });
  const operator = buildOperator(base, sessions, {
    presence,
    guards,
    unsubscribe: (s, name) => channels.unsubscribe(s, name),
  });
  return {
    app,
    kernel,
    operations: operator.operations,
    async start(forwarded) {
      const { cluster } = base;
      const control = operator.control;
      const findSession = base.findSession;
      const { log, stats, tracing } = base;
      const gap = (name: string) => {
        let told = 0;
        for (const session of index.sessionsOf(name)) if (sessions.replay.gap(session, name)) told++;
        return told;
      };
      // With handovers, the last position of each channel is kept for the sessions handed over.
      const delivering = handovers?.tracking(index) ?? index;
      await engine.start(
        new NodeInbound({
          ...{ cluster, control, records, index: delivering, presence, findSession, forwarded, log },
          ...{ stats, tracing, gap },
        }),
      );
      await engine.broker.subscribe(cluster.inbox);
      sessions.registry.startSweeping(options.sweepInterval, sessions.ends);
      providers.startRenewing();
      occupancy.start();
    },
    refuseHandshakes: (jitter) => base.taps.admission?.drain(jitter),
    drainForShutdown: (spread) => sessions.ends.drainForShutdown(spread),
    async close() {
      operator.control.close();
      sessions.registry.stopSweeping();
      providers.close();
      for (const session of [...sessions.registry.values()]) sessions.ends.removeSession(session, 'shutdown');
      // The channels this node's sessions held are vacated (and reported) before it leaves.
      await occupancy.close();
      records.close();
      // Members of the sessions just ended leave (and are announced) while the engine is up.
      await presence.settle();
      await engine.close();
    },
  };
}

function buildBase(
  options: ResolvedOptions,
  log: FastifyBaseLogger,
  engine: Engine,
  later: {
    findSession: (clientId: unknown) => Session | undefined;
    link: () => NodeLink;
    handovers: () => SessionHandovers | null;
  },
): Base {
  const { findSession } = later;
  const nodeId = randomBytes(6).toString('base64url');
  const stats = new KernelStats();
  const taps = new NodeTaps(new Admission(options.maxHandshakeRate));
  const local = (clientId: string) => findSession(clientId) !== undefined;
  const cluster = new ClusterLink(nodeId, engine, later.link, local, later.handovers);
  const history = new HistoryRules(options);
  const records = new RecordStore(new Map(options.records.map((p) => [p.pattern, p])));
  const providers = new ProviderRegistry(
    { lingerMs: options.providerLinger, leaseMs: options.providerLease },
    engine.leases,
    engine.presence,
    log,
    (subject) => {
      records.discarded(subject);
      void engine.broker.dropRecord(subject).catch(() => undefined);
    },
  );
  // Asked once: without an SDK no message is ever looked at for a trace.
  const tracing = tracingInstalled()
    ? new MessageTracing(nodeId, engine.capabilities.backend ?? 'memory')
    : null;
  const publisher = new Publisher({
    tracing,
    broker: engine.broker,
    records,
    history,
    stats,
    taps,
    cluster,
    findSession,
  });
  return {
    ...{ options, log, engine, nodeId, stats, taps, cluster, records, providers, publisher, findSession },
    tracing,
    extensions: new ExtensionPipeline(),
    services: new ServiceRegistry(),
    index: new SubscriptionIndex(),
  };
}

/** The sessions and their way out: registry, ends, the flusher, connects, and the ack extension between them. */
interface Sessions {
  readonly registry: SessionRegistry;
  readonly ends: SessionEnds;
  readonly outbound: Outbound;
  readonly connects: Connects;
  /** The replay extension, which also tells sessions of a gap the engine could not fill. */
  readonly replay: ReplayExtension;
  /** The protocol's extensions built with the sessions (ack, replay, delta), registered by `createNode`. */
  readonly protocol: readonly Extension[];
  findSession(clientId: unknown): Session | undefined;
}

function buildSessions(
  base: Base,
  more: {
    guards: Guards;
    presence: PresenceTracker;
    subscriptions: Subscriptions;
    handovers: () => SessionHandovers | null;
  },
): Sessions {
  const { options, log, stats, extensions } = base;
  // A session's host ends it, and ending it reaches the registry that made it: closures close the loop.
  const ends: SessionEnds = new SessionEnds({
    ...{ options, log, stats, extensions, ...more },
    registry: () => registry,
    connects: () => connects,
    outbound: () => outbound,
  });
  const registry = new SessionRegistry(ends, options.maxInterval, base.nodeId, options.sweepInterval);
  const ack = new AckExtension(
    connectionTypes,
    (s) => queueMicrotask(() => ends.dropSlowConsumer(s as Session)),
    options.maxQueuedMessages,
    base.tracing === null ? null : base.tracing.acked,
  );
  const replay = new ReplayExtension(base.engine.history);
  const protocol = [ack, replay, new DeltaExtension(replay)];
  const outbound: Outbound = new Outbound(
    (s) => connects.complete(s),
    (s) => ends.dropSlowConsumer(s),
    options.maxBufferedBytes,
    options.longPollDelay,
    ack,
    undefined,
    () => stats.flushed(),
  );
  const connects = new Connects(options, outbound, extensions, connectionTypes, registry);
  const findSession = (clientId: unknown): Session | undefined => {
    const session = registry.get(clientId);
    return session?.state === 'removed' ? undefined : session;
  };
  return { registry, ends, outbound, connects, replay, protocol, findSession };
}

/** Sessions handed over at drains, on an engine shared by several nodes (`null` otherwise). */
function buildHandovers(base: Base, sessions: Sessions, channels: ChannelOps): SessionHandovers | null {
  const { engine, log, extensions, index, cluster } = base;
  const { registry, connects, outbound, replay } = sessions;
  const parts = { engine, log, extensions, index, registry, connects, outbound, replay, channels, cluster };

  const remove = (s: Session) => sessions.ends.removeSession(s, 'handover');
  return SessionHandovers.create({ ...parts, remove, maxInterval: base.options.maxInterval }, base.nodeId);
}

/** The server API's side of the node: its own operations, the path between nodes, and what operators may call. */
function buildOperator(
  base: Base,
  sessions: Sessions,
  more: {
    presence: PresenceTracker;
    guards: Guards;
    unsubscribe: (session: Session, name: string) => void;
  },
): { admin: AdminOps; control: NodeLink; operations: NodeOperations } {
  const { options, engine, nodeId, index, taps, publisher } = base;
  const { presence, guards, unsubscribe } = more;
  const admin = new AdminOps(
    {
      ...{ nodeId, index, unsubscribe },
      ...{ registry: sessions.registry, connects: sessions.connects, outbound: sessions.outbound },
      findSession: sessions.findSession,
      removeSession: (s, reason) => sessions.ends.removeSession(s, reason),
      handOver: (clientId) => sessions.ends.handOverNow(clientId),
      emitSafe: (run) => guards.emitSafe(run),
    },
    options.maxInterval + options.timeout,
  );
  const control = new NodeLink(
    {
      nodeId,
      nodes: () => engine.directory.nodes(),
      isAlive: (id) => engine.directory.isAlive(id),
      send: (channel, payload, policy) => engine.broker.publish(channel, payload, policy),
      inboxOf,
      run: (request) => (request.op === 'stats' ? taps.stats() : admin.run(request)),
    },
    { forwardMs: options.timeout + FORWARD_MARGIN_MS },
  );
  const operations: NodeOperations = {
    ...{ nodeId, log: base.log, engine, control, admin, taps, presence },
    historyFor: (channel) => publisher.historyFor(channel),
    isRecordSubject: (channel) => base.records.patternFor(channel) !== undefined,
    deliverTo: (clientId, channel, data) => publisher.deliverTo(clientId, channel, data),
    channelCounts: () => index.counts(),
  };
  return { admin, control, operations };
}

/** The facade's port: closures over the collaborators (called only once the node is built). */
function appPort(base: Base, sessions: () => Sessions, wantOccupancy: () => void): AppPort {
  const { publisher, records, index, extensions } = base;
  return {
    nodeId: base.nodeId,
    log: base.log,
    publish: (channel, data, traceparent) => publisher.publish(channel, data, traceparent),
    updateRecord: (subject, fields) => publisher.updateRecord(subject, fields),
    deliverTo: (clientId, channel, data) => publisher.deliverTo(clientId, channel, data),
    isRecordSubject: (channel) => records.patternFor(channel) !== undefined,
    recordImage: (subject) => records.image(subject),
    services: base.services,
    providers: base.providers,
    addExtension: (extension) => extensions.add(extension),
    wantOccupancy,
    get extensionOrder() {
      return extensions.order;
    },
    subscriberCount: (channel) => index.subscriberCount(channel) + records.subscriberCount(channel),
    presence: base.engine.presence,
    session: (clientId) => base.findSession(clientId),
    get sessionCount() {
      return sessions().registry.size;
    },
    stats: () => nodeStats(base.stats, sessions()),
  };
}

function nodeStats(stats: KernelStats, sessions: Sessions): BayouStats {
  let heldLongPolls = 0;
  let subscriptionCount = 0;
  for (const s of sessions.registry.values()) {
    if (s.held?.poll) heldLongPolls++;
    subscriptionCount += s.subscriptions.size;
  }
  const out = sessions.outbound.stats;
  return {
    sessions: sessions.registry.size,
    messagesIn: stats.messagesIn,
    publishes: stats.publishes,
    slowConsumers: stats.slowConsumers,
    engineErrors: stats.engineErrors,
    messagesOut: out.messagesOut,
    bytesOut: out.bytesOut,
    frames: out.frames,
    heldLongPolls,
    subscriptions: subscriptionCount,
    removed: { ...stats.removed },
    handshakes: { ...stats.handshakes },
  };
}
