/**
 * One Bayeux session (a `clientId`): its subscriptions, its outbound queue and where that
 * queue drains to. Its lifecycle (state, carrier, held connect, deadlines) lives in
 * `session-lifecycle.ts`; a session owns no timers and no closures: expiry and connect
 * timeouts are decided by the registry's shared sweep, flushing by the per-turn flusher.
 *
 * Three views of it: `ServerSession` is what applications and hooks see; `ExtensionSession`
 * adds what extensions may do (keep state, request a delivery mode, hook deliveries, queue
 * messages); the `Session` class itself is the kernel's.
 */
import type { Publication } from '../engine/engine.js';
import type { TransportName } from '../types.js';
import type { Carrier, CarrierKind } from './carrier.js';
import type { HeldConnect, Lifecycle, SessionState } from './session-lifecycle.js';
import { SubscriptionSet } from './subscription-set.js';

/** What applications and hooks see of a session. */
export interface ServerSession {
  readonly id: string;
  readonly state: SessionState;
  /** The transport of its last connect (or handshake), or of the stream that carries it. */
  readonly transport: TransportName;
  /** Channels and patterns it subscribes to. */
  readonly subscriptions: ReadonlySet<string>;
  /** Whatever `authenticate` returned as an object: a frozen copy, set by the server only (assigning throws). */
  readonly auth: Readonly<Record<string, unknown>> | null;
  /** The `ext` of its handshake message. */
  readonly handshakeExt: Record<string, unknown> | undefined;
  /** Free slot for the application (a user name, a role). */
  readonly data: Record<string, unknown>;
  /** How its deliveries leave (see `DeliveryMode`); extensions choose it. */
  readonly deliveryMode: DeliveryMode;
}

/**
 * How a session's deliveries leave; the session owns it, extensions request it
 * (`requestDelivery`), and the flusher, the connect handler and the reply router read it.
 * - `push`: each per-turn flush leaves at once on the carrier the session has: a frame of a
 *   carrier that pushes (a WebSocket, a stream), or the reply of its held long-poll.
 * - `numbered`: pushed as well, each frame ending with the ack extension's numbered-frame
 *   marker (`ext.bayou.ackFrames`), on a carrier whose kind has `numberedFrames`.
 * - `connect-reply`: only inside `/meta/connect` replies, never as frames of their own
 *   (CometD's ack; ordered long-polling behind a balancer).
 * A carrier with its own way of writing (a held streaming response) adds its mode here and
 * a case where `Outbound.flush` switches on it.
 */
export type DeliveryMode = 'push' | 'numbered' | 'connect-reply';

/**
 * A publication on its way from the subscription index to the sessions subscribed to it,
 * built once per publication (only when a reached session has an enqueue hook).
 */
export interface PublicationDelivery {
  readonly publication: Publication;
  /** The message as queued for a session without hooks. */
  readonly json: string;
  /**
   * A variant of the message built once for every session that asks for it with the same
   * `key` (the replay extension's `ext.replay` positions).
   */
  once(key: object, build: (publication: Publication) => string): string;
}

/** An extension's step between the subscription index and a session's queue. */
export interface EnqueueHook {
  /** Shown in logs. */
  readonly name: string;
  /**
   * Runs for each publication the index is about to queue for `session`: a string queues
   * that text instead, `null` takes the publication (held back, queued later by the
   * extension), `undefined` leaves it to the next hook (and finally the plain message).
   */
  beforeEnqueue(session: ExtensionSession, delivery: PublicationDelivery): string | null | undefined;
}

/** What extensions see of a session: the application's view and the pipeline's levers. */
export interface ExtensionSession extends ServerSession {
  /** What the carrier its deliveries go by can do (`session/carrier.ts`). */
  readonly carrierKind: CarrierKind;
  /** Extensions keep their per-session state here, keyed by the extension object. */
  readonly extensionState: Map<object, unknown>;
  /** Asks for deliveries to leave in `mode` from now on (the last request wins). */
  requestDelivery(mode: DeliveryMode): void;
  /** The hooks its deliveries pass (`null` when none). */
  readonly enqueueHooks: readonly EnqueueHook[] | null;
  /**
   * Runs `hook` on every publication the index queues for this session, until removed;
   * `first` puts it ahead of the hooks already there (one that wraps what they make).
   */
  addEnqueueHook(hook: EnqueueHook, first?: boolean): void;
  removeEnqueueHook(hook: EnqueueHook): void;
  /** Queues one serialized message. */
  enqueue(json: string): void;
  /** Puts serialized messages back ahead of what is queued (a resend). */
  requeue(messages: readonly string[]): void;
}

/** What a session needs from its node: where to schedule a flush and the queue bounds. */
export interface SessionHost {
  scheduleFlush(session: Session): void;
  /** The queue is full: make room (flush to a socket) and return `true`, or drop the session. */
  overflow(session: Session): boolean;
  readonly maxQueuedMessages: number;
  /** Characters queued (`Infinity` for no cap). */
  readonly maxQueuedBytes: number;
}

/** The queue of every session with nothing queued (frozen: a write to it would be a bug). */
const NO_MESSAGES = Object.freeze([]) as unknown as string[];

export class Session implements ExtensionSession, Lifecycle {
  readonly id: string;
  // Lifecycle fields: written only by `transition()` (session-lifecycle.ts).
  state: SessionState = 'handshaken';
  carrier: Carrier | null = null;
  held: HeldConnect | null = null;
  expiresAt: number;
  /** Its place on the registry's deadline wheel (`deadline-wheel.ts`), written by the wheel only. */
  deadlineSpot = -1;

  /** The kind of carrier its last connect named (see `carriedBy`). */
  private kind: CarrierKind;
  /** Its channels and patterns: one in a field, a `Set` from the second (`subscription-set.ts`). */
  readonly subscriptions = new SubscriptionSet();
  /**
   * Serialized messages waiting for the next flush; changed only by this class's methods.
   * `NO_MESSAGES` (shared) while empty: an idle session holds no array of its own.
   */
  private pending: string[] = NO_MESSAGES;
  /**
   * Characters in the queue (a string's length: its bytes when ASCII), kept by every method
   * that changes the queue, for the byte cap; a number add per message.
   */
  private pendingBytes = 0;
  /** Whether a connect was ever seen (the first one is answered at once). */
  connected = false;
  /**
   * Whether its handshake negotiated the idle heartbeat (`ext.bayou.heartbeat`): on a
   * carrier that pings, the server's pings keep it alive and its connect is held longer.
   */
  heartbeat = false;
  /** Browser id from the `BAYEUX_BROWSER` cookie, for long-polling. */
  browserId: string | null = null;
  private authClaims: Readonly<Record<string, unknown>> | null = null;
  handshakeExt: Record<string, unknown> | undefined;
  private mode: DeliveryMode = 'push';
  private hooks: EnqueueHook[] | null = null;
  private extState: Map<object, unknown> | null = null;
  /** Stamp of the last publication delivered, so one matching several patterns is queued once. */
  lastDelivery = 0;
  /** Whether a flush is scheduled (or parked); changed only through the methods below. */
  private flushing = false;
  private appData: Record<string, unknown> | null = null;
  private readonly host: SessionHost;

  constructor(id: string, kind: CarrierKind, host: SessionHost, expiresAt: number) {
    this.id = id;
    this.kind = kind;
    this.host = host;
    this.expiresAt = expiresAt;
  }

  get transport(): TransportName {
    return this.kind.name;
  }

  /** What the carrier its deliveries go by can do (the stream's, for a stream's session). */
  get carrierKind(): CarrierKind {
    return this.kind;
  }

  /** Its deliveries go by a carrier of `kind` from now on (a connect named it, a stream opened). */
  carriedBy(kind: CarrierKind): void {
    this.kind = kind;
  }

  get flushScheduled(): boolean {
    return this.flushing;
  }

  /** Schedules a flush with the host unless one is scheduled: what is queued leaves then. */
  flushSoon(): void {
    if (!this.flushing) {
      this.flushing = true;
      this.host.scheduleFlush(this);
    }
  }

  /** The flusher took the session (it flushes now): the next message schedules again. */
  flushTaken(): void {
    this.flushing = false;
  }

  /** The flusher parked the session (a held long-poll waits for more): new messages just queue. */
  flushParked(): void {
    this.flushing = true;
  }

  /** Serialized messages waiting for the next flush (read-only: the methods below change it). */
  get queue(): readonly string[] {
    return this.pending;
  }

  get queuedBytes(): number {
    return this.pendingBytes;
  }

  /** What `authenticate` returned (frozen); read-only: assigning to it throws. */
  get auth(): Readonly<Record<string, unknown>> | null {
    return this.authClaims;
  }

  /** Sets `auth`: at the handshake, and when an accepted connect refreshed the token. Server-only. */
  setAuth(claims: Record<string, unknown> | null): void {
    this.authClaims = claims === null ? null : Object.freeze({ ...claims });
  }

  get deliveryMode(): DeliveryMode {
    return this.mode;
  }

  requestDelivery(mode: DeliveryMode): void {
    this.mode = mode;
  }

  /** The hooks deliveries pass before the queue, `null` (the hot path's test) when none. */
  get enqueueHooks(): readonly EnqueueHook[] | null {
    return this.hooks;
  }

  addEnqueueHook(hook: EnqueueHook, first = false): void {
    if (this.hooks === null) this.hooks = [hook];
    else if (!this.hooks.includes(hook)) this.hooks = first ? [hook, ...this.hooks] : [...this.hooks, hook];
  }

  removeEnqueueHook(hook: EnqueueHook): void {
    if (this.hooks === null) return;
    const rest = this.hooks.filter((h) => h !== hook);
    this.hooks = rest.length === 0 ? null : rest;
  }

  /**
   * Queues a publication through the enqueue hooks; `false` when a hook took it. Only
   * called for sessions with hooks: the others are queued `delivery.json` directly.
   */
  enqueueHooked(delivery: PublicationDelivery): boolean {
    let json: string | null | undefined;
    for (const hook of this.hooks ?? []) {
      json = hook.beforeEnqueue(this, delivery);
      if (json !== undefined) break;
    }
    if (json === null) return false;
    this.enqueue(json ?? delivery.json);
    return true;
  }

  /** Per-extension state, keyed by the extension; created on first use (most sessions need none). */
  get extensionState(): Map<object, unknown> {
    if (this.extState === null) this.extState = new Map();
    return this.extState;
  }

  get data(): Record<string, unknown> {
    if (this.appData === null) this.appData = Object.create(null) as Record<string, unknown>;
    return this.appData;
  }

  /** Queues one serialized message; the hot path of delivery. */
  enqueue(json: string): void {
    if (this.state === 'removed') return;
    const host = this.host;
    if (
      (this.pending.length >= host.maxQueuedMessages || this.pendingBytes >= host.maxQueuedBytes) &&
      !host.overflow(this)
    )
      return;
    if (this.pending === NO_MESSAGES) this.pending = [json];
    else this.pending.push(json);
    this.pendingBytes += json.length;
    this.flushSoon();
  }

  /** Puts `messages` back ahead of anything queued since (a resend after a lost batch). */
  requeue(messages: readonly string[]): void {
    if (messages.length === 0 || this.state === 'removed') return;
    this.pending = messages.concat(this.pending);
    for (let i = 0; i < messages.length; i++) this.pendingBytes += (messages[i] as string).length;
    this.flushSoon();
  }

  /** Takes everything queued, leaving the queue empty. */
  drain(): string[] {
    const q = this.pending;
    // The caller owns what it gets: never the shared empty array.
    if (q === NO_MESSAGES) return [];
    this.pending = NO_MESSAGES;
    this.pendingBytes = 0;
    return q;
  }

  /** Puts `json` at position `at` of the queue (a reply ahead of what its message queued). */
  insert(at: number, json: string): void {
    if (at >= this.pending.length) this.enqueue(json);
    else {
      this.pending.splice(at, 0, json);
      this.pendingBytes += json.length;
    }
  }
}
