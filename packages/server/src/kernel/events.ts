/** The application events and the service handler shape, shared by the kernel and the facade. */
import type { Message } from '@bayou/protocol';
import type { PresenceMember } from '../engine/engine.js';
import type { ServerSession } from '../session/session.js';
import type { RemovalReason } from '../types.js';

export interface BayouEvents {
  /** A session was made (a successful handshake). */
  'session:created': [session: ServerSession];
  /** The same as `session:created`, under its first name (kept for existing listeners). */
  session: [session: ServerSession];
  'session:removed': [session: ServerSession, reason: RemovalReason];
  subscribe: [session: ServerSession, channel: string];
  unsubscribe: [session: ServerSession, channel: string];
  /**
   * A channel got its first subscriber in the whole cluster; emitted by one node only
   * (the one whose subscriber made the transition). Tracked (engine calls per channel) from
   * the first listener of this event or `channel:vacated` on, or with `webhooks` on.
   */
  'channel:occupied': [channel: string];
  /** A channel lost its last subscriber in the whole cluster (or its last node died); once. */
  'channel:vacated': [channel: string];
  /**
   * A session became a member of a presence channel (it subscribed); fires on the node
   * that owns the session, once per join in the cluster.
   */
  'presence:join': [channel: string, member: PresenceMember];
  /**
   * A member left a presence channel: it unsubscribed or its session ended (on its own
   * node), or its node died (on the one node that found it dead). Once per leave in the cluster.
   */
  'presence:leave': [channel: string, member: PresenceMember];
}

/** Where the kernel reports application events (the facade, an EventEmitter). */
export interface EventSink {
  emit<K extends keyof BayouEvents>(event: K, ...args: BayouEvents[K]): boolean;
}

export interface ServiceContext<App = unknown> {
  session: ServerSession;
  message: Message;
  /** The application facade (`app.bayou`). */
  bayou: App;
}

/** Serves a `/service/...` channel: the returned value (or promise) is the answer. */
export type ServiceHandler<App = unknown> = (data: unknown, ctx: ServiceContext<App>) => unknown;
