/**
 * All sessions of this node, and the one shared sweep (every `sweepInterval` ms, as
 * CometD does) that answers held connects past their deadline and expires sessions whose
 * client stopped connecting. No timer per session.
 *
 * A clientId is `<nodeId>.<144 random bits>`: unguessable, URL-safe, and it names the node
 * that owns the session, so any node of a cluster knows where to forward without a lookup.
 */
import { RandomIds } from '../random-ids.js';
import type { CarrierKind } from './carrier.js';
import { Session, type SessionHost } from './session.js';
import { due } from './session-lifecycle.js';

export interface SweepHandler {
  /** A held connect reached its deadline: answer it. */
  connectTimedOut(session: Session): void;
  /** A session without a held connect passed `expiresAt`: remove it. */
  sessionExpired(session: Session): void;
}

/** The node id a clientId names, or `null` when it has none. */
export function ownerOf(clientId: string): string | null {
  const dot = clientId.indexOf('.');
  return dot > 0 ? clientId.slice(0, dot) : null;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private timer: NodeJS.Timeout | null = null;
  /** 144 random bits per clientId, cut from a pool refilled off the event loop. */
  private readonly ids = new RandomIds(18);

  constructor(
    private readonly host: SessionHost,
    private readonly maxInterval: number,
    readonly nodeId: string,
  ) {}

  create(kind: CarrierKind, now = Date.now()): Session {
    const session = new Session(`${this.nodeId}.${this.ids.next()}`, kind, this.host, now + this.maxInterval);
    this.sessions.set(session.id, session);
    return session;
  }

  /** A session another node handed over (issue #35), under its own clientId. */
  adopt(id: string, kind: CarrierKind, now = Date.now()): Session {
    const session = new Session(id, kind, this.host, now + this.maxInterval);
    this.sessions.set(id, session);
    return session;
  }

  get(id: unknown): Session | undefined {
    return typeof id === 'string' ? this.sessions.get(id) : undefined;
  }

  delete(session: Session): boolean {
    return this.sessions.delete(session.id);
  }

  get size(): number {
    return this.sessions.size;
  }

  values(): IterableIterator<Session> {
    return this.sessions.values();
  }

  startSweeping(interval: number, handler: SweepHandler): void {
    this.timer = setInterval(() => this.sweep(handler, Date.now()), interval);
    this.timer.unref();
  }

  stopSweeping(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over all sessions; cheap per session (two comparisons). */
  sweep(handler: SweepHandler, now: number): void {
    for (const session of this.sessions.values()) {
      const what = due(session, now);
      if (what === 'answer') handler.connectTimedOut(session);
      else if (what === 'expire') handler.sessionExpired(session);
    }
  }
}
