/**
 * The protocol kernel of one node: the batch path through the meta handlers, with the
 * sessions, subscriptions and extension pipeline behind it. Applications never see it
 * (they use the facade, `app.bayou`); meta handlers and transports reach it through the
 * small interfaces in `bayeux/kernel-api.ts` and `transports/transport-kernel.ts`.
 *
 * It builds nothing: `create-node.ts`, the composition root, builds its collaborators and
 * hands them in here; every field is set once, in the constructor. The engine's side of
 * the node is `node-inbound.ts`, how sessions end `session-ends.ts`, what leaves for the
 * engine `publisher.ts`.
 */
import { formatError, isMetaChannel, type Message, parseChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { type BatchContext, replyTo, routeReply } from '../bayeux/batch-context.js';
import { processBatch } from '../bayeux/dispatcher.js';
import type { ExtensionPipeline, Refusal } from '../bayeux/extensions.js';
import type { KernelApi } from '../bayeux/kernel-api.js';
import type { MaybePromise, StreamPosition } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';
import type { RecordStore } from '../records/record-store.js';
import type { Outbound } from '../session/outbound.js';
import type { Session } from '../session/session.js';
import type { SessionRegistry } from '../session/session-registry.js';
import type { TransportKernel } from '../transports/transport-kernel.js';
import type { RemovalReason, RequestInfo } from '../types.js';
import type { ClusterLink } from './cluster-link.js';
import type { Connects } from './connects.js';
import type { EventSink, ServiceHandler } from './events.js';
import type { Guards } from './guards.js';
import { andThen } from './hooks.js';
import type { KernelStats } from './kernel-stats.js';
import type { NodeTaps } from './node-taps.js';
import type { PresenceTracker } from './presence-tracker.js';
import type { Publisher } from './publisher.js';
import type { ServiceRegistry } from './service-registry.js';
import type { SessionEnds } from './session-ends.js';
import type { Subscriptions } from './subscriptions.js';

/** What the composition root hands the kernel. */
export interface KernelParts {
  readonly options: ResolvedOptions;
  readonly log: FastifyBaseLogger;
  readonly stats: KernelStats;
  /** The facade handed to service handlers as `ctx.bayou`. */
  readonly app: unknown;
  readonly taps: NodeTaps;
  readonly cluster: ClusterLink;
  readonly registry: SessionRegistry;
  readonly connects: Connects;
  readonly outbound: Outbound;
  readonly extensions: ExtensionPipeline;
  readonly records: RecordStore;
  readonly services: ServiceRegistry;
  readonly subscriptions: Subscriptions;
  readonly presence: PresenceTracker;
  readonly publisher: Publisher;
  readonly guards: Guards;
  readonly ends: SessionEnds;
  /** Whether the server API ended this clientId (its client is told not to come back). */
  kicked(clientId: unknown): boolean;
}

export class Kernel implements KernelApi, TransportKernel {
  readonly options: ResolvedOptions;
  readonly log: FastifyBaseLogger;
  readonly stats: KernelStats;
  readonly app: unknown;
  readonly taps: NodeTaps;
  readonly cluster: ClusterLink;
  readonly connects: Connects;
  readonly outbound: Outbound;
  private readonly p: KernelParts;

  constructor(parts: KernelParts) {
    this.p = parts;
    this.options = parts.options;
    this.log = parts.log;
    this.stats = parts.stats;
    this.app = parts.app;
    this.taps = parts.taps;
    this.cluster = parts.cluster;
    this.connects = parts.connects;
    this.outbound = parts.outbound;
    // Nothing is written into the kernel after this: collaborators come in above, once.
    Object.freeze(this);
  }

  handleBatch(messages: unknown[], ctx: BatchContext, scanForProto: boolean): void | Promise<void> {
    return processBatch(this, messages, ctx, scanForProto);
  }

  /** The session a message names, or `undefined` after replying `402::session_unknown`. */
  sessionFor(message: Message, ctx: BatchContext): Session | undefined {
    const session = this.p.registry.get(message.clientId);
    if (session !== undefined && session.state !== 'removed') {
      ctx.session = session;
      return session;
    }
    this.reply(ctx, null, message, {
      successful: false,
      error: formatError('sessionUnknown'),
      // A session the server API ended stays ended: its client is told not to come back.
      advice: { reconnect: this.p.kicked(message.clientId) ? 'none' : 'handshake', interval: 0 },
    });
    return undefined;
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
        this.p.extensions.outgoing(reply, request, session);
      } catch (err) {
        this.log.error({ err }, (err as Error).message);
      }
    }
    routeReply(ctx, session, JSON.stringify(reply), at);
  }

  findSession(clientId: unknown): Session | undefined {
    const session = this.p.registry.get(clientId);
    return session?.state === 'removed' ? undefined : session;
  }

  createSession(ctx: BatchContext, message: Message, auth: Record<string, unknown> | null): Session {
    const session = this.p.registry.create(ctx.kind);
    session.browserId = ctx.browserId;
    session.handshakeExt = message.ext;
    session.setAuth(auth);
    this.connects.bindHandshake(session, ctx);
    ctx.session = session;
    return session;
  }

  removeSession(session: Session, reason: RemovalReason): void {
    this.p.ends.removeSession(session, reason);
  }

  /** Runs the incoming extensions; an error string refuses the message. */
  incoming(
    message: Message,
    session: Session | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined> {
    const extensions = this.p.extensions;
    if (extensions.size === 0) return undefined;
    try {
      const verdict = extensions.incoming(message, session, request);
      if (verdict instanceof Promise)
        return verdict.catch((err: unknown) => this.p.guards.extensionFailed(err));
      return verdict;
    } catch (err) {
      return this.p.guards.extensionFailed(err);
    }
  }

  /** Emits an application event; a listener that throws is logged and reported as `false`. */
  emitSafe(run: (events: EventSink) => void): boolean {
    return this.p.guards.emitSafe(run);
  }

  /** Runs an engine call; its failure undoes what was done and becomes `503::engine_unavailable`. */
  engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined> {
    return this.p.guards.engineCall(call, undo);
  }

  /** Subscribes `session` to `name`; resolves with an error string when it failed. */
  subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined> {
    const done = this.p.subscriptions.subscribe(session, name, message);
    const presence = this.p.presence;
    if (!presence.enabled) return done;
    return andThen(done, (error) => error ?? presence.join(session, name, message));
  }

  unsubscribe(session: Session, name: string): void {
    if (this.p.presence.enabled) this.p.presence.leave(session, name);
    this.p.subscriptions.unsubscribe(session, name);
  }

  /** After the subscribe reply went out: a record subscriber gets the image; extensions follow up. */
  subscribed(session: Session, name: string): void {
    if (parseChannel(name)?.wildcard !== null) return;
    if (this.p.records.patternFor(name) !== undefined) this.p.records.sendSnapshotTo(session, name);
    else this.p.extensions.subscribed(session, name);
  }

  isRecordSubject(channel: string): boolean {
    return this.p.records.patternFor(channel) !== undefined;
  }

  /** Hands a broadcast to the engine; resolves with its position once the engine has it. */
  publish(channel: string, data: unknown, traceparent?: string): MaybePromise<StreamPosition | null> {
    return this.p.publisher.publish(channel, data, traceparent);
  }

  serviceFor(channel: string): ServiceHandler | undefined {
    return this.p.services.lookup(channel);
  }
}
