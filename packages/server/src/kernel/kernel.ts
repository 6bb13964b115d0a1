/**
 * The protocol kernel of one node: sessions, subscriptions, connects, the extension
 * pipeline and the link to the engine. Applications never see it (they use the facade,
 * `app.bayou`); meta handlers and transports reach it through the small interfaces in
 * `bayeux/kernel-api.ts`. It is also the engine's `EngineNode`: publications from the
 * cluster arrive in `deliver`, forwarded batches in `forwarded`.
 */
import { randomBytes } from 'node:crypto';
import { formatError, isMetaChannel, type Message, parseChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { presencePatterns } from '../auth/channel-rules.js';
import { type BatchContext, replyTo, routeReply } from '../bayeux/batch-context.js';
import { processBatch } from '../bayeux/dispatcher.js';
import { ExtensionFailure, ExtensionPipeline, type Refusal } from '../bayeux/extensions.js';
import type { ConsoleGate, KernelApi } from '../bayeux/kernel-api.js';
import { SubscriptionIndex } from '../channels/subscription-index.js';
import type {
  Engine,
  EngineNode,
  ForwardRequest,
  ForwardResponse,
  HistoryPolicy,
  LostMember,
  MaybePromise,
  Publication,
  StreamPosition,
} from '../engine/engine.js';
import { AckExtension } from '../extensions/ack-extension.js';
import { ReplayExtension } from '../extensions/replay-extension.js';
import type { ResolvedOptions } from '../options.js';
import { ProviderRegistry } from '../records/provider-registry.js';
import { RecordStore } from '../records/record-store.js';
import { Outbound } from '../session/outbound.js';
import type { ServerSession, Session, SessionHost } from '../session/session.js';
import { transition } from '../session/session-lifecycle.js';
import { ownerOf, SessionRegistry, type SweepHandler } from '../session/session-registry.js';
import type { RemovalReason, RequestInfo } from '../types.js';
import { AdminOps } from './admin-ops.js';
import { ChannelOccupancy } from './channel-occupancy.js';
import { ClusterControl } from './cluster-control.js';
import { Connects } from './connects.js';
import type { EventSink, ServiceHandler } from './events.js';
import { HistoryRules } from './history-rules.js';
import { andThen, errorFor } from './hooks.js';
import { PRESENCE_SERVICE, presenceService } from './presence-service.js';
import { PresenceTracker } from './presence-tracker.js';
import { ServiceRegistry } from './service-registry.js';
import { Subscriptions } from './subscriptions.js';

export interface KernelStats {
  messagesIn: number;
  slowConsumers: number;
  publishes: number;
  engineErrors: number;
  /** Sessions ended, by reason. */
  removed: Record<RemovalReason, number>;
  /** Handshakes by outcome. */
  handshakes: { accepted: number; denied: number; failed: number };
  /** Service calls and the seconds they took, in `SERVICE_BUCKETS` (cumulative at export). */
  services: { count: number; sum: number; buckets: number[] };
}

/** Upper bounds (seconds) of the service time histogram. */
export const SERVICE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] as const;

export class Kernel implements SessionHost, SweepHandler, EngineNode, KernelApi {
  readonly nodeId = randomBytes(6).toString('base64url');
  readonly registry: SessionRegistry;
  readonly index = new SubscriptionIndex();
  readonly records: RecordStore;
  readonly providers: ProviderRegistry;
  readonly outbound: Outbound;
  readonly connects: Connects;
  readonly extensions = new ExtensionPipeline();
  readonly services = new ServiceRegistry();
  readonly history: HistoryRules;
  readonly subscriptions: Subscriptions;
  /** Cluster-wide occupied/vacated channel events; tracked only with `webhooks` on (it costs engine calls). */
  readonly occupancy: ChannelOccupancy | null;
  /** Member lists of the channels presence rules cover. */
  readonly presence: PresenceTracker;
  /** The server API's operations on this node's sessions, and the path that carries them between nodes. */
  readonly admin: AdminOps;
  readonly control: ClusterControl;
  readonly stats: KernelStats = {
    messagesIn: 0,
    slowConsumers: 0,
    publishes: 0,
    engineErrors: 0,
    removed: { disconnect: 0, timeout: 0, 'slow-consumer': 0, shutdown: 0, error: 0, 'token-expired': 0 },
    handshakes: { accepted: 0, denied: 0, failed: 0 },
    services: { count: 0, sum: 0, buckets: SERVICE_BUCKETS.map(() => 0) },
  };
  readonly maxQueuedMessages: number;
  readonly maxQueuedBytes: number;
  /** The facade handed to service handlers as `ctx.bayou`. */
  app: unknown = null;
  /** Lets the operator's console's sessions past the hooks (`admin/admin-feed.ts`), else `null`. */
  consoleGate: ConsoleGate | null = null;
  /** Answers the `stats` control op: set by the operator's console (`admin/`), else `null`. */
  nodeStats: (() => unknown) | null = null;
  /** Counts publishes per channel while a console watches; `null` (no work) otherwise. */
  countPublish: ((channel: string) => void) | null = null;

  constructor(
    readonly options: ResolvedOptions,
    readonly log: FastifyBaseLogger,
    readonly engine: Engine,
    readonly events: EventSink,
  ) {
    this.maxQueuedMessages = options.maxQueuedMessages;
    this.maxQueuedBytes = options.maxQueuedBytes === 0 ? Number.POSITIVE_INFINITY : options.maxQueuedBytes;
    this.history = new HistoryRules(options);
    this.presence = new PresenceTracker(presencePatterns(options.auth?.channels), this);
    if (this.presence.enabled)
      this.services.set(PRESENCE_SERVICE, presenceService(this.presence, options.canSubscribe));
    this.admin = new AdminOps(this, options.maxInterval + options.timeout);
    this.control = new ClusterControl({
      nodeId: this.nodeId,
      nodes: () => engine.directory.nodes(),
      send: (channel, payload, history) => engine.broker.publish(channel, payload, history),
      inboxOf: (nodeId) => `${NODE_INBOX_PREFIX}${nodeId}`,
      run: (request) => (request.op === 'stats' ? (this.nodeStats?.() ?? null) : this.admin.run(request)),
    });
    this.registry = new SessionRegistry(this, options.maxInterval, this.nodeId);
    this.records = new RecordStore(new Map(options.records.map((p) => [p.pattern, p])));
    this.providers = new ProviderRegistry(
      { lingerMs: options.providerLinger, leaseMs: options.providerLease },
      engine.leases,
      engine.presence,
      log,
      (subject) => {
        this.records.discarded(subject);
        void engine.broker.dropRecord(subject).catch(() => undefined);
      },
    );
    const ack = new AckExtension(
      (s) => queueMicrotask(() => this.dropSlowConsumer(s as Session)),
      options.maxQueuedMessages,
    );
    this.extensions.add(ack);
    this.outbound = new Outbound(
      (s) => this.connects.complete(s),
      (s) => this.dropSlowConsumer(s),
      options.maxBufferedBytes,
      options.longPollDelay,
      (s, messages) => ack.frameMarker(s, messages),
    );
    this.connects = new Connects(options, this.outbound, this.extensions);
    this.extensions.add(new ReplayExtension(engine.history));
    this.occupancy =
      options.webhooks === undefined
        ? null
        : new ChannelOccupancy(
            engine.presence,
            (change, channel) => this.emitSafe((e) => e.emit(`channel:${change}`, channel)),
            log,
            options.webhooks.deadNodeSweep,
          );
    this.subscriptions = new Subscriptions(
      this.index,
      this.records,
      this.providers,
      engine.broker,
      this.extensions,
      {
        engineCall: (call, undo) => this.engineCall(call, undo),
        extensionCall: (call) => this.extensionCall(call),
        log,
      },
      this.occupancy,
    );
  }

  /** The broker channel that carries direct deliveries to this node's sessions. */
  private get inbox(): string {
    return `${NODE_INBOX_PREFIX}${this.nodeId}`;
  }

  async start(): Promise<void> {
    await this.engine.start(this);
    await this.engine.broker.subscribe(this.inbox);
    this.registry.startSweeping(this.options.sweepInterval, this);
    this.providers.startRenewing();
    this.occupancy?.start();
  }

  async close(): Promise<void> {
    this.control.close();
    this.registry.stopSweeping();
    this.providers.close();
    for (const session of [...this.registry.values()]) this.removeSession(session, 'shutdown');
    // The channels this node's sessions held are vacated (and reported) before it leaves.
    await this.occupancy?.close();
    this.records.close();
    // Members of the sessions just ended leave (and are announced) while the engine is up.
    await this.presence.settle();
    await this.engine.close();
  }

  // ---- the batch path ----------------------------------------------------------------

  handleBatch(messages: unknown[], ctx: BatchContext, scanForProto: boolean): void | Promise<void> {
    return processBatch(this, messages, ctx, scanForProto);
  }

  /** The session a message names, or `undefined` after replying `402::session_unknown`. */
  sessionFor(message: Message, ctx: BatchContext): Session | undefined {
    const session = this.registry.get(message.clientId);
    if (session !== undefined && session.state !== 'removed') {
      ctx.session = session;
      return session;
    }
    this.reply(ctx, null, message, {
      successful: false,
      error: formatError('sessionUnknown'),
      // A session the server API ended stays ended: its client is told not to come back.
      advice: { reconnect: this.admin.kicked(message.clientId) ? 'none' : 'handshake', interval: 0 },
    });
    return undefined;
  }

  /** Whether a clientId belongs to another node (a long-poll to forward there). */
  ownedElsewhere(clientId: unknown): string | null {
    if (typeof clientId !== 'string') return null;
    const owner = ownerOf(clientId);
    return owner !== null && owner !== this.nodeId ? owner : null;
  }

  /** Builds a reply to `request`, runs the outgoing extensions and routes it. */
  reply(
    ctx: BatchContext,
    session: Session | null,
    request: Message,
    fields: Record<string, unknown>,
    at?: number,
  ): void {
    const reply = replyTo(request, fields);
    if (isMetaChannel(request.channel)) {
      try {
        this.extensions.outgoing(reply, request, session);
      } catch (err) {
        this.log.error({ err }, (err as Error).message);
      }
    }
    routeReply(ctx, session, JSON.stringify(reply), at);
  }

  findSession(clientId: unknown): Session | undefined {
    const session = this.registry.get(clientId);
    return session?.state === 'removed' ? undefined : session;
  }

  isRecordSubject(channel: string): boolean {
    return this.records.patternFor(channel) !== undefined;
  }

  /** After the subscribe reply went out: a record subscriber gets the image; extensions follow up. */
  subscribed(session: Session, name: string): void {
    if (parseChannel(name)?.wildcard !== null) return;
    if (this.records.patternFor(name) !== undefined) this.records.sendSnapshotTo(session, name);
    else this.extensions.subscribed(session, name);
  }

  /** Runs the incoming extensions; an error string refuses the message. */
  incoming(
    message: Message,
    session: Session | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined> {
    if (this.extensions.size === 0) return undefined;
    try {
      const verdict = this.extensions.incoming(message, session, request);
      if (verdict instanceof Promise) return verdict.catch((err: unknown) => this.extensionFailed(err));
      return verdict;
    } catch (err) {
      return this.extensionFailed(err);
    }
  }

  private extensionFailed(err: unknown): string {
    const cause = err instanceof ExtensionFailure ? err.cause : err;
    return errorFor(cause, this.log, err instanceof ExtensionFailure ? err.message : 'extension');
  }

  createSession(ctx: BatchContext, message: Message, auth: Record<string, unknown> | null): Session {
    const session = this.registry.create(ctx.transport);
    session.browserId = ctx.browserId;
    session.handshakeExt = message.ext;
    session.auth = auth;
    this.connects.bindHandshake(session, ctx);
    ctx.session = session;
    return session;
  }

  /** Emits an application event; a listener that throws is logged and reported as `false`. */
  emitSafe(run: (events: EventSink) => void): boolean {
    try {
      run(this.events);
      return true;
    } catch (err) {
      this.log.error({ err }, 'event listener failed');
      return false;
    }
  }

  // ---- subscriptions -------------------------------------------------------------------

  /** Subscribes `session` to `name`; resolves with an error string when it failed. */
  subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined> {
    const done = this.subscriptions.subscribe(session, name, message);
    if (!this.presence.enabled) return done;
    return andThen(done, (error) => error ?? this.presence.join(session, name, message));
  }

  unsubscribe(session: Session, name: string): void {
    if (this.presence.enabled) this.presence.leave(session, name);
    this.subscriptions.unsubscribe(session, name);
  }

  /** Members of a node found dead, for this node to announce (the engine picked it). */
  membersLost(lost: readonly LostMember[]): void {
    this.presence.lost(lost);
  }

  /** This node's members, written again after the cluster took it for dead: announced as joins. */
  membersRestored(members: readonly LostMember[]): void {
    this.presence.restored(members);
  }

  /** Local subscribers of `channel`, plain and record. */
  subscriberCount(channel: string): number {
    return this.index.subscriberCount(channel) + this.records.subscriberCount(channel);
  }

  // ---- publishing and delivery -----------------------------------------------------------

  /** Hands a broadcast to the engine; resolves with its position once the engine has it. */
  publish(channel: string, data: unknown): MaybePromise<StreamPosition | null> {
    this.stats.publishes++;
    if (this.countPublish !== null) this.countPublish(channel);
    return this.engine.broker.publish(channel, JSON.stringify({ channel, data }), this.historyFor(channel));
  }

  /** Merges `fields` into record `subject` cluster-wide; resolves once the engine has it. */
  updateRecord(subject: string, fields: Record<string, unknown>): MaybePromise<void> {
    const changed = this.records.diff(subject, fields);
    if (changed === null) return undefined;
    return this.engine.broker.publishRecord(subject, JSON.stringify(changed));
  }

  /** How much history `channel` keeps: the first matching `history` rule, else the defaults. */
  historyFor(channel: string): HistoryPolicy {
    return this.history.policyFor(channel);
  }

  /**
   * Sends `data` on `channel` to one session only (a private message, a notice), on
   * whichever node owns it: directly when it is here, else through the engine to its node.
   */
  deliverTo(clientId: string, channel: string, data: unknown): MaybePromise<boolean> {
    const json = JSON.stringify({ channel, data });
    const local = this.findSession(clientId);
    if (local !== undefined) {
      local.enqueue(json);
      return true;
    }
    const owner = this.ownedElsewhere(clientId);
    if (owner === null) return false;
    const payload = JSON.stringify({ to: clientId, message: json });
    const sent = this.engine.broker.publish(`${NODE_INBOX_PREFIX}${owner}`, payload, NO_HISTORY);
    return sent instanceof Promise ? sent.then(() => true) : true;
  }

  /** A publication from the engine, for this node's subscribers. */
  deliver(publication: Publication): void {
    if (publication.channel === this.inbox) {
      if (ClusterControl.owns(publication.payload)) {
        this.control.receive(publication.payload);
        return;
      }
      const { to, message } = JSON.parse(publication.payload) as { to: string; message: string };
      this.findSession(to)?.enqueue(message);
      return;
    }
    if (publication.record === true) {
      this.records.apply(publication.channel, JSON.parse(publication.payload) as Record<string, unknown>);
      return;
    }
    this.index.deliver(publication);
  }

  /** Runs an extension step; a throw or rejection becomes the message's error. */
  private extensionCall(call: () => MaybePromise<string | undefined>): MaybePromise<string | undefined> {
    try {
      const r = call();
      return r instanceof Promise ? r.catch((err: unknown) => this.extensionFailed(err)) : r;
    } catch (err) {
      return this.extensionFailed(err);
    }
  }

  /** Runs an engine call; its failure undoes what was done and becomes `503::engine_unavailable`. */
  engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined> {
    const failed = (err: unknown): string => {
      this.stats.engineErrors++;
      this.log.warn({ err }, 'engine call failed');
      undo();
      return formatError('engineUnavailable');
    };
    try {
      const r = call();
      return r instanceof Promise ? r.then(() => undefined, failed) : undefined;
    } catch (err) {
      return failed(err);
    }
  }

  // ---- cluster -----------------------------------------------------------------------------

  /** A long-poll batch another node received for a session of this node. */
  async forwarded(request: ForwardRequest): Promise<ForwardResponse> {
    if (this.forwardHandler === null) return { status: 503, body: '[]' };
    return this.forwardHandler(request);
  }

  isAlive(nodeId: string): MaybePromise<boolean> {
    return this.engine.directory.isAlive(nodeId);
  }

  engineReady(): boolean {
    return this.engine.ready();
  }

  forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse> {
    return this.engine.directory.forward(nodeId, request);
  }

  /** Set by the long-polling transport, which knows how to run a batch without a socket. */
  forwardHandler: ((request: ForwardRequest) => Promise<ForwardResponse>) | null = null;

  // ---- sessions ends -------------------------------------------------------------------------

  removeSession(session: Session, reason: RemovalReason): void {
    if (session.state === 'removed') return;
    const held = session.held !== null;
    if (held) {
      // A node going away refuses the connect (402 + handshake): the client handshakes on
      // another node and recovers from the engine's history what it had not received.
      if (reason === 'shutdown') this.connects.complete(session, HANDSHAKE_NOW, true, SHUTDOWN_ERROR);
      else this.connects.complete(session, HANDSHAKE);
    }
    // On a streaming WebSocket the reply was queued: send it, and on shutdown whatever was
    // queued, before the queue is dropped (not to a reader already too slow). Sending may
    // itself find the reader slow and remove the session: then that removal was the whole of it.
    if (
      (held || reason === 'shutdown') &&
      reason !== 'slow-consumer' &&
      session.socket !== null &&
      session.queue.length > 0
    ) {
      this.outbound.flush(session);
      if (this.findSession(session.id) !== session) return;
    }
    transition(session, { type: 'remove' }, Date.now(), this.options.maxInterval);
    this.stats.removed[reason]++;
    this.registry.delete(session);
    for (const name of [...session.subscriptions]) {
      if (this.presence.enabled) this.presence.leave(session, name);
      this.subscriptions.drop(session, name);
    }
    session.drain();
    this.extensions.removed(session);
    this.emitSafe((e) => e.emit('session:removed', session as ServerSession, reason));
  }

  scheduleFlush(session: Session): void {
    this.outbound.schedule(session);
  }

  overflow(session: Session): boolean {
    if (session.socket !== null) {
      // A WebSocket drains every turn; a burst larger than the queue goes out early, and
      // the socket's own buffer (maxBufferedBytes) decides whether the reader is slow.
      this.outbound.flush(session);
      if (
        session.state !== 'removed' &&
        session.queue.length < this.maxQueuedMessages &&
        session.queuedBytes < this.maxQueuedBytes
      )
        return true;
      if (session.state !== 'removed') this.dropSlowConsumer(session);
      return false;
    }
    this.dropSlowConsumer(session);
    return false;
  }

  dropSlowConsumer(session: Session): void {
    if (session.state === 'removed') return;
    this.stats.slowConsumers++;
    this.log.warn(
      { clientId: session.id, queued: session.queue.length, queuedBytes: session.queuedBytes },
      'slow consumer: queue limit reached, session dropped',
    );
    // What it could not take is dropped; a held connect is told to handshake again.
    session.drain();
    session.socket?.end(1008, 'slow consumer');
    this.removeSession(session, 'slow-consumer');
  }

  connectTimedOut(session: Session): void {
    this.connects.complete(session);
  }

  sessionExpired(session: Session): void {
    this.removeSession(session, 'timeout');
  }

  /**
   * Graceful shutdown, first step (the app stops taking requests meanwhile): every session
   * of this node ends now. What is queued goes out where a carrier can take it (a held
   * long-poll's reply, a WebSocket), then the session's held connect, or its next one, is
   * answered `402::session_unknown` with `reconnect: handshake`, so its client handshakes
   * again on another node and resubscribes from the last position it received. What it had
   * not received yet was published through the engine: with history on the channel (shared
   * in Redis), the replay extension sends it again; with the memory engine it is lost.
   */
  drainForShutdown(): void {
    this.registry.stopSweeping();
    for (const session of [...this.registry.values()]) this.removeSession(session, 'shutdown');
  }

  /** Set by the metrics: observes each service call's duration. */
  onServiceTime: ((seconds: number) => void) | null = null;

  /** Records how long a service call took. */
  serviceTimed(seconds: number): void {
    this.onServiceTime?.(seconds);
    const s = this.stats.services;
    s.count++;
    s.sum += seconds;
    const i = SERVICE_BUCKETS.findIndex((b) => seconds <= b);
    if (i >= 0) (s.buckets[i] as number)++;
  }

  /** Counts a handshake's outcome. */
  handshakeDone(result: 'accepted' | 'denied' | 'failed'): void {
    this.stats.handshakes[result]++;
  }

  serviceFor(channel: string): ServiceHandler | undefined {
    return this.services.lookup(channel);
  }
}

const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };
/** Advice to a session that ended: handshake again (after a shutdown, at once). */
const HANDSHAKE = Object.freeze({ reconnect: 'handshake' });
const HANDSHAKE_NOW = Object.freeze({ reconnect: 'handshake', interval: 0 });
const SHUTDOWN_ERROR = formatError('sessionUnknown');
/** Broker channels named after nodes carry direct deliveries; clients cannot subscribe to them. */
const NODE_INBOX_PREFIX = '/~node/';
