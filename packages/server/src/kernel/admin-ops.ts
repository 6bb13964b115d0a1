/**
 * What the server API asks of one node, run on that node's own sessions: its facts, its
 * channels with their subscriber counts, ending a user's sessions (told not to reconnect)
 * and unsubscribing them from a channel. `NodeLink` carries the requests between nodes.
 */
import type { Session } from '../session/session.js';
import type { RemovalReason } from '../types.js';
import type { EventSink } from './events.js';
import type { ControlOp, NodeInfo, Target } from './node-link.js';

/** The part of the kernel the operations use. */
export interface AdminKernel {
  readonly nodeId: string;
  readonly registry: { values(): Iterable<Session>; readonly size: number };
  readonly index: { counts(): Iterable<[string, number]>; readonly size: number };
  readonly connects: { complete(session: Session, advice?: Record<string, unknown>): void };
  readonly outbound: { flush(session: Session): void };
  findSession(clientId: unknown): Session | undefined;
  removeSession(session: Session, reason: RemovalReason): void;
  /** Hands a session of this node over to another (`SessionEnds.handOverNow`). */
  handOver(clientId: string): Promise<boolean>;
  unsubscribe(session: Session, name: string): void;
  emitSafe(run: (events: EventSink) => void): boolean;
}

/** Most clientIds remembered as "ended by the API" (oldest forgotten first). */
const MAX_KICKED = 100_000;

export class AdminOps {
  private readonly startedAt = Date.now();
  /** clientId → until when a late connect of an ended session is told `reconnect: none`. */
  private readonly kickedUntil = new Map<string, number>();

  constructor(
    private readonly k: AdminKernel,
    /** How long an ended session's clientId is remembered: its client's next connect comes within it. */
    private readonly rememberMs: number,
  ) {}

  run(
    request: Exclude<ControlOp, { op: 'stats' }>,
  ): NodeInfo | [string, number][] | number | Promise<boolean> {
    switch (request.op) {
      case 'info':
        return {
          nodeId: this.k.nodeId,
          sessions: this.k.registry.size,
          uptime: Math.round((Date.now() - this.startedAt) / 1000),
        };
      case 'channels':
        return this.channels(request.limit);
      case 'disconnect':
        return this.disconnect(request.target);
      case 'unsubscribe':
        return this.unsubscribe(request.target, request.channel);
      case 'release':
        return this.release(request.clientId);
      case 'handover':
        return this.k.handOver(request.clientId);
      case 'requeue':
        return this.requeue(request.clientId, request.messages);
    }
  }

  /**
   * Puts deliveries back ahead of a session's queue: the node that forwarded the batch they
   * answered found its client gone (it gave up waiting), and a client without acknowledgements
   * would never get them again. A session whose frames the ack extension numbers resends its
   * unacknowledged ones itself. The number of messages put back.
   */
  private requeue(clientId: string, messages: unknown): number {
    const session = this.k.findSession(clientId);
    if (session === undefined || session.deliveryMode !== 'push' || !Array.isArray(messages)) return 0;
    const texts = messages.filter((m): m is string => typeof m === 'string');
    session.requeue(texts);
    return texts.length;
  }

  /**
   * Answers the held long-poll of a session now, with what is queued: the node relaying that
   * poll from its client shuts down and waits for the answer rather than lose it.
   */
  private release(clientId: string): number {
    const session = this.k.findSession(clientId);
    if (session?.held?.poll == null) return 0;
    this.k.connects.complete(session);
    return 1;
  }

  /** Whether `clientId` was ended by the API lately: its client must not come back. */
  kicked(clientId: unknown): boolean {
    if (typeof clientId !== 'string') return false;
    const until = this.kickedUntil.get(clientId);
    return until !== undefined && until > Date.now();
  }

  private channels(limit: number): [string, number][] {
    const all = [...this.k.index.counts()];
    if (all.length > limit) all.sort((a, b) => b[1] - a[1]).length = limit;
    return all;
  }

  private matching(target: Target): Session[] {
    if ('clientId' in target) {
      const s = this.k.findSession(target.clientId);
      return s === undefined ? [] : [s];
    }
    const out: Session[] = [];
    for (const s of this.k.registry.values()) if (userOf(s) === target.user) out.push(s);
    return out;
  }

  private disconnect(target: Target): number {
    const sessions = this.matching(target);
    for (const s of sessions) {
      this.remember(s.id);
      const carrier = s.carrier;
      if (s.held !== null) {
        // The held connect carries the word: do not reconnect. Sent before the queue goes.
        this.k.connects.complete(s, { reconnect: 'none', interval: 0 });
        this.k.outbound.flush(s);
      }
      if (this.k.findSession(s.id) === s) this.k.removeSession(s, 'disconnect');
      // Its connection ends now, after that last frame, not when a sweep finds it sessionless.
      carrier?.end(1000, 'disconnected by the server');
    }
    return sessions.length;
  }

  private unsubscribe(target: Target, channel: string): number {
    let n = 0;
    for (const s of this.matching(target)) {
      if (!s.subscriptions.has(channel)) continue;
      this.k.unsubscribe(s, channel);
      this.k.emitSafe((e) => e.emit('unsubscribe', s, channel));
      n++;
    }
    return n;
  }

  private remember(clientId: string): void {
    const now = Date.now();
    for (const [id, until] of this.kickedUntil) {
      if (until > now && this.kickedUntil.size < MAX_KICKED) break;
      this.kickedUntil.delete(id);
    }
    this.kickedUntil.set(clientId, now + this.rememberMs);
  }

  /** Entries remembered now (for tests of the bound). */
  get rememberedCount(): number {
    return this.kickedUntil.size;
  }
}

function userOf(session: Session): string | undefined {
  const sub = session.auth?.sub;
  return typeof sub === 'string' || typeof sub === 'number' ? String(sub) : undefined;
}
