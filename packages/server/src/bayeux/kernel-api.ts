/**
 * What the meta handlers may ask of the kernel, as narrow interfaces: each handler takes
 * the `Pick` of `KernelApi` it uses, and the options it reads. The kernel implements it;
 * handlers never import the kernel, so dependencies point one way.
 */
import type { Message } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { MaybePromise, StreamPosition } from '../engine/engine.js';
import type { EventSink, ServiceHandler } from '../kernel/events.js';
import type { ResolvedOptions } from '../options.js';
import type { Session } from '../session/session.js';
import type { RemovalReason, RequestInfo } from '../types.js';
import type { BatchContext } from './batch-context.js';
import type { Refusal } from './extensions.js';

/** The options the handlers read. */
export type HandlerOptions = Pick<
  ResolvedOptions,
  | 'transports'
  | 'interval'
  | 'timeout'
  | 'heartbeatInterval'
  | 'authenticate'
  | 'canSubscribe'
  | 'canPublish'
  | 'maxSubscriptionsPerSession'
>;

/**
 * The operator's console (`admin/`) lets its own sessions past the authenticate and
 * channel hooks: a handshake with a valid console token, and that session's subscriptions
 * to the console's channels. `null` without a console.
 */
/** Whether a handshake is admitted now (`kernel/admission.ts`): `null`, or why not and for how long. */
export interface HandshakeGate {
  handshake(): { readonly args: string; readonly interval: number } | null;
}

export interface ConsoleGate {
  /** The session's auth when `message` carries a valid console token, else `null` (the hooks decide). */
  handshake(message: Message): Record<string, unknown> | null;
  /** Whether `session` subscribes to `channel` as the console, past `canSubscribe`. */
  subscribe(session: Session, channel: string): boolean;
}

/** The node's live sessions, as the handlers find and end them. */
export interface SessionAccess {
  /** The live session a clientId names, without replying when there is none. */
  find(clientId: unknown): Session | undefined;
  remove(session: Session, reason: RemovalReason): void;
}

/** What a session does with channels (`kernel/channel-ops.ts`). */
export interface ChannelAccess {
  /** Subscribes `session` to `name`; resolves with an error string when it failed. */
  subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined>;
  unsubscribe(session: Session, name: string): void;
  /** After a successful subscribe reply: the record snapshot, if `name` is a record subject. */
  subscribed(session: Session, name: string): void;
  /** Whether `channel` is a record subject (clients may not publish there). */
  isRecordSubject(channel: string): boolean;
}

/**
 * What the handlers ask of the node: the batch path's own operations (`sessionFor`, `reply`,
 * `incoming`, `createSession`) and, as fields, the narrow parts they use — no method here
 * only forwards to another object.
 */
export interface KernelApi {
  readonly options: HandlerOptions;
  /** Where the operator's console taps in: its gate past the hooks, `null` without a console. */
  readonly taps: { readonly consoleGate: ConsoleGate | null; readonly admission: HandshakeGate | null };
  readonly log: FastifyBaseLogger;
  /** The kernel's counters (`kernel/kernel-stats.ts`). */
  readonly stats: {
    messagesIn: number;
    /** Records how long a service call took (for metrics). */
    serviceTimed(seconds: number): void;
    /** Counts a handshake's outcome (for metrics). */
    handshakeDone(result: 'accepted' | 'denied' | 'failed'): void;
  };
  /** The facade, handed to services as `ctx.bayou`. */
  readonly app: unknown;
  readonly connects: {
    connect(session: Session, message: Message, ctx: BatchContext): void;
    complete(session: Session, advice?: Record<string, unknown>): void;
  };
  readonly outbound: { flush(session: Session): void };
  readonly sessions: SessionAccess;
  readonly channels: ChannelAccess;
  /** Application code and engine calls, guarded (`kernel/guards.ts`). */
  readonly guards: {
    /** Emits an application event; a listener that throws is logged and reported as `false`. */
    emitSafe(run: (events: EventSink) => void): boolean;
    /** Runs an engine call; its failure undoes what was done and becomes `503::engine_unavailable`. */
    engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined>;
  };
  /** Hands a broadcast to the engine; resolves with its position once the engine has it. */
  readonly publisher: {
    publish(channel: string, data: unknown, traceparent?: string): MaybePromise<StreamPosition | null>;
  };
  readonly services: { lookup(channel: string): ServiceHandler | undefined };
  sessionFor(message: Message, ctx: BatchContext): Session | undefined;
  /** Replies to `request`; `at` places it in the session's queue (see `routeReply`). */
  reply(
    ctx: BatchContext,
    session: Session | null,
    request: Message,
    fields: Record<string, unknown>,
    at?: number,
  ): void;
  incoming(
    message: Message,
    session: Session | null,
    request: RequestInfo,
  ): MaybePromise<Refusal | undefined>;
  createSession(ctx: BatchContext, message: Message, auth: Record<string, unknown> | null): Session;
}
