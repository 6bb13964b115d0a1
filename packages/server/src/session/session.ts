/**
 * One Bayeux session (a `clientId`): its subscriptions, its outbound queue and where that
 * queue drains to — a bound WebSocket, or the long-poll `/meta/connect` it holds. A
 * session owns no timers and no closures: expiry and connect timeouts are decided by the
 * registry's shared sweep, flushing by the shared per-turn flusher.
 */
import type { AckState } from '../bayeux/ack.js';
import type { TransportName } from '../options.js';

/** A WebSocket as the session sees it. */
export interface SocketLink {
  send(frame: string): void;
  readonly bufferedAmount: number;
  /** Ends the link; `code`/`reason` as in a WebSocket close. */
  end(code: number, reason: string): void;
}

/** A held long-poll request; `respond` writes one Bayeux array of JSON strings and ends it. */
export interface PendingPoll {
  respond(messages: string[]): void;
}

export interface HeldConnect {
  /** The `id` of the held connect; its reply is built when it completes. */
  id: string | undefined;
  deadline: number;
  /** `null` when the connect was held on a WebSocket. */
  poll: PendingPoll | null;
  browserId: string | null;
}

/** What a session needs from its server: where to schedule a flush and the queue bounds. */
export interface SessionHost {
  scheduleFlush(session: Session): void;
  /** The queue is full: make room (flush to a socket) and return `true`, or drop the session. */
  overflow(session: Session): boolean;
  readonly maxQueuedMessages: number;
}

export type SessionState = 'handshaken' | 'connected' | 'removed';

export class Session {
  readonly id: string;
  readonly createdAt = Date.now();
  state: SessionState = 'handshaken';
  transport: TransportName;
  /** Channels and patterns this session subscribes to. */
  readonly subscriptions = new Set<string>();
  /** Serialized messages waiting for the next flush. */
  queue: string[] = [];
  socket: SocketLink | null = null;
  held: HeldConnect | null = null;
  /** When an idle session (no connect held) expires; set by the registry. */
  expiresAt: number;
  /** Browser id from the `BAYEUX_BROWSER` cookie, for long-polling. */
  browserId: string | null = null;
  /** Whatever `authenticate` returned as an object. */
  auth: Record<string, unknown> | null = null;
  private appData: Record<string, unknown> | null = null;
  /** The `ext` of the handshake message. */
  handshakeExt: Record<string, unknown> | undefined;
  /** Set when the client negotiated CometD's ack extension: messages only in connect replies. */
  ack: AckState | null = null;
  /** Stamp of the last publish delivered, so a message matching several patterns is queued once. */
  lastDelivery = 0;
  flushScheduled = false;
  private readonly host: SessionHost;

  constructor(id: string, transport: TransportName, host: SessionHost, expiresAt: number) {
    this.id = id;
    this.transport = transport;
    this.host = host;
    this.expiresAt = expiresAt;
  }

  /** Free slot for the application (a user name, a role); created on first use. */
  get data(): Record<string, unknown> {
    if (this.appData === null) this.appData = Object.create(null) as Record<string, unknown>;
    return this.appData;
  }

  /** Queues one serialized message; the hot path of delivery. */
  enqueue(json: string): void {
    if (this.state === 'removed') return;
    if (this.queue.length >= this.host.maxQueuedMessages && !this.host.overflow(this)) return;
    this.queue.push(json);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.host.scheduleFlush(this);
    }
  }

  /** Takes everything queued, leaving the queue empty. */
  drain(): string[] {
    const q = this.queue;
    this.queue = [];
    return q;
  }
}
