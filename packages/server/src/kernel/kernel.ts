/**
 * The protocol kernel of one node: the batch path through the meta handlers, with the
 * sessions, subscriptions and extension pipeline behind it. Applications never see it
 * (they use the facade, `app.bayou`); meta handlers and transports reach it through the
 * small interfaces in `bayeux/kernel-api.ts` and `transports/transport-kernel.ts`.
 *
 * It builds nothing: `create-node.ts` (for the composition root, `compose.ts`) builds its
 * collaborators and hands them in here; every field is set once, in the constructor. Its
 * methods are the batch path's own; what a handler needs of another part it reaches as
 * that part, through a narrow field (`sessions`, `channels`, `guards`, `publisher`,
 * `services`), not through a method here that forwards to it. The engine's side of
 * the node is `node-inbound.ts`, how sessions end `session-ends.ts`, what leaves for the
 * engine `publisher.ts`.
 */
import { formatError, isMetaChannel, type Message } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { type BatchContext, replyTo, routeReply } from '../bayeux/batch-context.js';
import { processBatch } from '../bayeux/dispatcher.js';
import type { ExtensionPipeline, Refusal } from '../bayeux/extensions.js';
import type { KernelApi, SessionAccess } from '../bayeux/kernel-api.js';
import type { MaybePromise } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';
import type { Outbound } from '../session/outbound.js';
import type { Session } from '../session/session.js';
import type { SessionRegistry } from '../session/session-registry.js';
import type { TransportKernel } from '../transports/transport-kernel.js';
import type { RequestInfo } from '../types.js';
import type { ChannelOps } from './channel-ops.js';
import type { ClusterLink } from './cluster-link.js';
import type { Connects } from './connects.js';
import type { Guards } from './guards.js';
import type { KernelStats } from './kernel-stats.js';
import type { NodeTaps } from './node-taps.js';
import type { Publisher } from './publisher.js';
import type { ServiceRegistry } from './service-registry.js';
import type { SessionHandovers } from './session-handover.js';

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
  readonly services: ServiceRegistry;
  readonly channels: ChannelOps;
  readonly publisher: Publisher;
  readonly guards: Guards;
  readonly sessions: SessionAccess;
  /** Whether the server API ended this clientId (its client is told not to come back). */
  kicked(clientId: unknown): boolean;
  /** Sessions handed over between nodes at a drain (`null` on one node). */
  readonly handovers: SessionHandovers | null;
}

/** Advice to a client whose session this node handed over: the same session, on another node. */
const HANDED_OVER = Object.freeze({ reconnect: 'retry', interval: 0 });

export class Kernel implements KernelApi, TransportKernel {
  readonly options: ResolvedOptions;
  readonly log: FastifyBaseLogger;
  readonly stats: KernelStats;
  readonly app: unknown;
  readonly taps: NodeTaps;
  readonly cluster: ClusterLink;
  readonly connects: Connects;
  readonly outbound: Outbound;
  readonly sessions: SessionAccess;
  readonly channels: ChannelOps;
  readonly guards: Guards;
  readonly publisher: Publisher;
  readonly services: ServiceRegistry;
  readonly #registry: SessionRegistry;
  readonly #extensions: ExtensionPipeline;
  readonly #kicked: (clientId: unknown) => boolean;
  readonly #handovers: SessionHandovers | null;

  constructor(parts: KernelParts) {
    this.options = parts.options;
    this.log = parts.log;
    this.stats = parts.stats;
    this.app = parts.app;
    this.taps = parts.taps;
    this.cluster = parts.cluster;
    this.connects = parts.connects;
    this.outbound = parts.outbound;
    this.sessions = parts.sessions;
    this.channels = parts.channels;
    this.guards = parts.guards;
    this.publisher = parts.publisher;
    this.services = parts.services;
    this.#registry = parts.registry;
    this.#extensions = parts.extensions;
    this.#kicked = parts.kicked;
    this.#handovers = parts.handovers;
    // Nothing is written into the kernel after this: collaborators come in above, once.
    Object.freeze(this);
  }

  handleBatch(messages: unknown[], ctx: BatchContext, scanForProto: boolean): void | Promise<void> {
    // A session another node handed over is adopted here first (a claim in the engine).
    const handovers = this.#handovers;
    if (handovers !== null) {
      const located = handovers.locate((messages[0] as { clientId?: unknown } | null)?.clientId, ctx.kind);
      if (located instanceof Promise)
        return located.then(() => processBatch(this, messages, ctx, scanForProto));
    }
    return processBatch(this, messages, ctx, scanForProto);
  }

  /** The session a message names, or `undefined` after replying `402::session_unknown`. */
  sessionFor(message: Message, ctx: BatchContext): Session | undefined {
    const session = this.#registry.get(message.clientId);
    if (session !== undefined && session.state !== 'removed') {
      ctx.session = session;
      return session;
    }
    if (this.#handovers?.handedOver(message.clientId) === true) {
      // Handed over while this node drains: its client reconnects with it elsewhere.
      this.reply(ctx, null, message, {
        successful: false,
        error: formatError('nodeBusy'),
        advice: HANDED_OVER,
      });
      // A WebSocket stays open to this node only for that session: closed, its client opens
      // one elsewhere (after this reply went out) instead of retrying here.
      const carrier = ctx.carrier;
      if (carrier !== null && !carrier.kind.keepsSession)
        setImmediate(() => carrier.end(1001, 'session handed over'));
      return undefined;
    }
    this.reply(ctx, null, message, {
      successful: false,
      error: formatError('sessionUnknown'),
      // A session the server API ended stays ended: its client is told not to come back.
      advice: { reconnect: this.#kicked(message.clientId) ? 'none' : 'handshake', interval: 0 },
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
        this.#extensions.outgoing(reply, request, session);
      } catch (err) {
        this.log.error({ err }, (err as Error).message);
      }
    }
    routeReply(ctx, session, JSON.stringify(reply), at);
  }

  createSession(ctx: BatchContext, message: Message, auth: Record<string, unknown> | null): Session {
    const session = this.#registry.create(ctx.kind);
    session.browserId = ctx.browserId;
    session.handshakeExt = message.ext;
    session.setAuth(auth);
    this.connects.bindHandshake(session, ctx);
    ctx.session = session;
    return session;
  }

  /** Runs the incoming extensions; an error string refuses the message. */
  incoming(
    message: Message,
    session: Session | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined> {
    const extensions = this.#extensions;
    if (extensions.size === 0) return undefined;
    try {
      const verdict = extensions.incoming(message, session, request);
      if (verdict instanceof Promise)
        return verdict.catch((err: unknown) => this.guards.extensionFailed(err));
      return verdict;
    } catch (err) {
      return this.guards.extensionFailed(err);
    }
  }
}
