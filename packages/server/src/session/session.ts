/**
 * One Bayeux session (a `clientId`): its subscriptions, its outbound queue and where that
 * queue drains to. Its lifecycle (state, carrier, held connect, deadlines) lives in
 * `session-lifecycle.ts`; a session owns no timers and no closures: expiry and connect
 * timeouts are decided by the registry's shared sweep, flushing by the per-turn flusher.
 */
import type { Publication } from '../engine/engine.js';
import type { TransportName } from '../types.js';
import type { HeldConnect, Lifecycle, SessionState, SocketLink } from './session-lifecycle.js';

/** What applications and hooks see of a session. */
export interface ServerSession {
  readonly id: string;
  readonly state: SessionState;
  /** The transport of its last connect (or handshake). */
  readonly transport: TransportName;
  /** Channels and patterns it subscribes to. */
  readonly subscriptions: ReadonlySet<string>;
  /** Whatever `authenticate` returned as an object. */
  auth: Record<string, unknown> | null;
  /** The `ext` of its handshake message. */
  readonly handshakeExt: Record<string, unknown> | undefined;
  /** Free slot for the application (a user name, a role). */
  readonly data: Record<string, unknown>;
  /** Extensions keep their per-session state here, keyed by the extension object. */
  readonly extensionState: Map<object, unknown>;
  /** Deliveries travel only in `/meta/connect` replies (set by extensions that number them). */
  metaConnectDeliveryOnly: boolean;
  /** Deliveries carry their history position in `ext.replay` (set by the replay extension). */
  wantsPositions: boolean;
  /** WebSocket frames end with a batch number to acknowledge (set by the ack extension). */
  numberedFrames: boolean;
  /** Puts serialized messages back ahead of what is queued (a resend). */
  requeue(messages: string[]): void;
  /**
   * Channels whose live deliveries are held back (while what was missed is fetched):
   * publications on them collect here instead of in the queue.
   */
  holding: Map<string, Publication[]> | null;
  /** Queues one serialized message. */
  enqueue(json: string): void;
  /** The client IP the limits extension counted this session under, or `null`. */
  countedIp: string | null;
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

export class Session implements ServerSession, Lifecycle {
  readonly id: string;
  readonly createdAt = Date.now();
  // Lifecycle fields: written only by `transition()` (session-lifecycle.ts).
  state: SessionState = 'handshaken';
  socket: SocketLink | null = null;
  held: HeldConnect | null = null;
  expiresAt: number;

  transport: TransportName;
  readonly subscriptions = new Set<string>();
  /** Serialized messages waiting for the next flush. */
  queue: string[] = [];
  /**
   * Characters in `queue` (a string's length: its bytes when ASCII), kept by every method
   * that changes the queue, for the byte cap; a number add per message.
   */
  queuedBytes = 0;
  /** Whether a connect was ever seen (the first one is answered at once). */
  connected = false;
  /** Browser id from the `BAYEUX_BROWSER` cookie, for long-polling. */
  browserId: string | null = null;
  auth: Record<string, unknown> | null = null;
  handshakeExt: Record<string, unknown> | undefined;
  /**
   * Deliveries leave only inside `/meta/connect` replies, never as frames of their own
   * (CometD's "meta connect delivery only"); set by extensions that number those replies.
   */
  metaConnectDeliveryOnly = false;
  /** Whether deliveries carry their history position in `ext` (negotiated by replay). */
  wantsPositions = false;
  /** Whether each WebSocket frame ends with a batch number (negotiated by ack). */
  numberedFrames = false;
  holding: Map<string, Publication[]> | null = null;
  countedIp: string | null = null;
  private extState: Map<object, unknown> | null = null;
  /** Stamp of the last publication delivered, so one matching several patterns is queued once. */
  lastDelivery = 0;
  flushScheduled = false;
  private appData: Record<string, unknown> | null = null;
  private readonly host: SessionHost;

  constructor(id: string, transport: TransportName, host: SessionHost, expiresAt: number) {
    this.id = id;
    this.transport = transport;
    this.host = host;
    this.expiresAt = expiresAt;
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
      (this.queue.length >= host.maxQueuedMessages || this.queuedBytes >= host.maxQueuedBytes) &&
      !host.overflow(this)
    )
      return;
    this.queue.push(json);
    this.queuedBytes += json.length;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.host.scheduleFlush(this);
    }
  }

  /** Puts `messages` back ahead of anything queued since (a resend after a lost batch). */
  requeue(messages: string[]): void {
    if (messages.length === 0 || this.state === 'removed') return;
    this.queue = messages.concat(this.queue);
    for (let i = 0; i < messages.length; i++) this.queuedBytes += (messages[i] as string).length;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.host.scheduleFlush(this);
    }
  }

  /** Takes everything queued, leaving the queue empty. */
  drain(): string[] {
    const q = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    return q;
  }

  /** Puts `json` at position `at` of the queue (a reply ahead of what its message queued). */
  insert(at: number, json: string): void {
    if (at >= this.queue.length) this.enqueue(json);
    else {
      this.queue.splice(at, 0, json);
      this.queuedBytes += json.length;
    }
  }
}
