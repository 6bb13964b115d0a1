/**
 * The limits extension: applies the `Limiter` at the points it names. A `/meta/handshake`
 * is checked against its client IP's handshake rate and session count before
 * `authenticate` runs; every publish and service call from a session against that
 * session's publish rate. A refusal is a Bayeux error reply with advice (`429::rate_limited`
 * with the wait as `interval`, `403:<max>:session_limit`), never a silent drop. The IP is
 * `request.ip` as Fastify computes it, so `trustProxy` applies.
 */
import { isMetaChannel, META_HANDSHAKE, type Message } from '@bayou/protocol';
import type { Extension, Refusal, Reply } from '../bayeux/extensions.js';
import type { Limiter } from '../limits/limiter.js';
import type { ExtensionSession } from '../session/session.js';
import type { RequestInfo } from '../types.js';

export class LimitsExtension implements Extension {
  readonly name = 'limits';
  readonly stage = 'guard';
  /** The IP of each handshake in flight, until its reply says whether a session was made. */
  private readonly handshakes = new WeakMap<Message, string>();
  /**
   * The IP each session was counted under. Every session has one, so it is kept here
   * rather than in `extensionState` (which would give every session a Map of its own).
   */
  private readonly counted = new WeakMap<ExtensionSession, string>();

  constructor(readonly limiter: Limiter) {}

  incoming(message: Message, session: ExtensionSession | null, request: RequestInfo): Refusal | undefined {
    const channel = message.channel;
    if (channel === META_HANDSHAKE) {
      const refused = this.limiter.checkHandshake(request.ip);
      if (refused !== null) return refused;
      if (request.ip !== undefined) this.handshakes.set(message, request.ip);
      return undefined;
    }
    if (session === null || isMetaChannel(channel)) return undefined;
    return this.limiter.checkPublish(session, channel) ?? undefined;
  }

  outgoing(reply: Reply, request: Message, session: ExtensionSession | null): void {
    if (request.channel !== META_HANDSHAKE) return;
    const ip = this.handshakes.get(request);
    if (ip === undefined) return;
    this.handshakes.delete(request);
    if (reply.successful !== true || session === null) return;
    this.limiter.sessionOpened(ip);
    this.counted.set(session, ip);
  }

  removed(session: ExtensionSession): void {
    const ip = this.counted.get(session);
    if (ip === undefined) return;
    this.counted.delete(session);
    this.limiter.sessionClosed(ip);
  }
}
