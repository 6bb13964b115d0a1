/**
 * Turns the application's events into webhook events: sessions connected and ended on
 * this node, channels occupied and vacated in the cluster (each emitted by one node), and
 * presence joins and leaves.
 */
import { userOf } from '../auth/user-of.js';
import type { BayouApp } from '../bayou-app.js';
import type { PresenceMember } from '../engine/engine.js';
import type { ServerSession } from '../session/session.js';
import type { WebhookSender } from './webhook-sender.js';

function withUser<T extends object>(fields: T, session: ServerSession): T & { user?: string } {
  const user = userOf(session);
  return user === undefined ? fields : { ...fields, user };
}

export function attachWebhooks(bayou: BayouApp, sender: WebhookSender): void {
  bayou.on('session', (session) =>
    sender.push(withUser({ type: 'session.connected', clientId: session.id }, session)),
  );
  bayou.on('session:removed', (session, reason) =>
    sender.push(withUser({ type: 'session.disconnected', clientId: session.id, reason }, session)),
  );
  bayou.on('channel:occupied', (channel) => sender.push({ type: 'channel.occupied', channel }));
  bayou.on('channel:vacated', (channel) => sender.push({ type: 'channel.vacated', channel }));
  // Presence events fire once per change in the cluster (see the presence tracker).
  const member = (channel: string, m: PresenceMember) =>
    m.user === undefined
      ? { channel, clientId: m.clientId }
      : { channel, clientId: m.clientId, user: m.user };
  bayou.on('presence:join', (channel, m) => sender.push({ type: 'presence.join', ...member(channel, m) }));
  bayou.on('presence:leave', (channel, m) => sender.push({ type: 'presence.leave', ...member(channel, m) }));
}
