/**
 * The console's live feed and actions, over Bayou itself. A session whose handshake
 * carries a valid console token (`ext.bayouAdmin`) is an admin session; only such a
 * session may subscribe to `/bayou/admin/**` or call `/service/bayou/admin/*`, and no
 * client may publish there. While at least one admin session of this node holds the feed
 * channel, this node asks every node for its figures once a second (the `stats` control
 * op) and hands the snapshot to those sessions alone; with none, no timer runs.
 */
import { META_HANDSHAKE, META_SUBSCRIBE, META_UNSUBSCRIBE, type Message } from '@bayou/protocol';
import type { Extension, Refusal, Reply } from '../bayeux/extensions.js';
import type { ConsoleGate } from '../bayeux/kernel-api.js';
import type { BayouApp } from '../bayou-app.js';
import { onTargets } from '../http/server-api.js';
import type { Target } from '../kernel/node-link.js';
import type { NodeOperations } from '../kernel/node-operations.js';
import type { ServerSession } from '../session/session.js';
import { ADMIN_SERVICES, FEED_CHANNEL, isAdminChannel } from './admin-channels.js';
import { adminServices } from './admin-services.js';
import type { AdminCredential } from './admin-token.js';
import type { NodeStats } from './node-stats.js';

export { ADMIN_PREFIX, ADMIN_SERVICES, FEED_CHANNEL } from './admin-channels.js';
/** How often the feed ticks while watched. */
export const FEED_INTERVAL_MS = 1000;

export interface ClusterSnapshot {
  at: number;
  /** The node that gathered it (the one the console is connected to). */
  via: string;
  nodes: (NodeStats | { nodeId: string; error: string })[];
}

function subscriptions(message: Message): string[] {
  const s = message.subscription;
  return typeof s === 'string' ? [s] : Array.isArray(s) ? s.filter((x) => typeof x === 'string') : [];
}

export class AdminFeed implements Extension {
  readonly name = 'admin-console';
  /** It decides who may touch the console's channels: a guard. */
  readonly stage = 'guard';
  private readonly admins = new WeakSet<ServerSession>();
  /** This node's admin sessions that hold the feed: removed on unsubscribe and on their end. */
  private readonly watchers = new Map<string, ServerSession>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  /**
   * Console sessions pass the token and channel hooks (a server with tokens on would refuse
   * the page's handshake, which carries no JWT); what they may do is checked here instead.
   */
  readonly gate: ConsoleGate = {
    handshake: (message) => (this.hasToken(message) ? { bayouConsole: true } : null),
    subscribe: (session, channel) => this.admins.has(session) && isAdminChannel(channel),
  };
  private closed = false;

  constructor(
    app: BayouApp,
    private readonly ops: NodeOperations,
    private readonly credential: AdminCredential,
  ) {
    for (const [channel, handler] of adminServices(app, ops, (target: Target) => this.disconnect(target)))
      app.service(`${ADMIN_SERVICES}${channel}`, handler);
  }

  /** Admin sessions of this node holding the feed now. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  incoming(message: Message, session: ServerSession | null): Refusal | undefined {
    const channel = message.channel;
    if (channel === META_SUBSCRIBE || channel === META_UNSUBSCRIBE) {
      const names = subscriptions(message);
      if (!names.some(isAdminChannel)) return undefined;
      if (session === null || !this.admins.has(session)) return '403::admin_only';
      return undefined;
    }
    if (channel.startsWith(ADMIN_SERVICES))
      return session !== null && this.admins.has(session) ? undefined : '403::admin_only';
    if (isAdminChannel(channel)) return '403::read_only';
    return undefined;
  }

  outgoing(reply: Reply, request: Message, session: ServerSession | null): void {
    if (request.channel !== META_HANDSHAKE || reply.successful !== true || session === null) return;
    if (this.hasToken(request)) this.admins.add(session);
  }

  private hasToken(message: Message): boolean {
    const ext = message.ext as Record<string, unknown> | undefined;
    return ext?.bayouAdmin !== undefined && this.credential.valid(ext.bayouAdmin);
  }

  subscribed(session: ServerSession, channel: string): void {
    if (channel !== FEED_CHANNEL || !this.admins.has(session)) return;
    this.watchers.set(session.id, session);
    if (this.timer === null && !this.ticking) this.schedule(0);
  }

  unsubscribed(session: ServerSession, channel: string): void {
    if (channel === FEED_CHANNEL) this.watchers.delete(session.id);
  }

  removed(session: ServerSession): void {
    this.watchers.delete(session.id);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (this.watchers.size === 0) return;
    this.ticking = true;
    const k = this.ops;
    try {
      const answers = await k.control.askAll<NodeStats | null>({ op: 'stats' });
      const snapshot: ClusterSnapshot = {
        at: Date.now(),
        via: k.nodeId,
        nodes: answers.map((a) =>
          'error' in a
            ? { nodeId: a.nodeId, error: a.error }
            : (a.result ?? { nodeId: a.nodeId, error: 'this node runs without --admin' }),
        ),
      };
      for (const s of this.watchers.values()) void k.deliverTo(s.id, FEED_CHANNEL, snapshot);
    } catch (err) {
      k.log.warn({ err }, 'admin console: the cluster could not answer');
    } finally {
      this.ticking = false;
    }
    if (this.watchers.size > 0) this.schedule(FEED_INTERVAL_MS);
  }

  /** Ends the target's sessions wherever they live, as `POST /api/disconnect` does. */
  private disconnect(target: Target): Promise<number> {
    const k = this.ops;
    return onTargets(k, target, (nodeId) => k.control.ask<number>(nodeId, { op: 'disconnect', target }));
  }
}
