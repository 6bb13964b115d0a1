/**
 * All sessions of this node, and the one shared sweep (every `sweepInterval` ms, as
 * CometD does) that ends held connects past their deadline and expires sessions whose
 * client stopped connecting. No timer per session.
 */
import { randomBytes } from 'node:crypto';
import type { TransportName } from '../options.js';
import { Session, type SessionHost } from './session.js';

export interface SweepHandler {
  /** A held connect reached its deadline: answer it. */
  connectTimedOut(session: Session): void;
  /** An idle session passed `expiresAt`: remove it. */
  sessionExpired(session: Session): void;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly host: SessionHost,
    private readonly maxInterval: number,
  ) {}

  create(transport: TransportName, now = Date.now()): Session {
    // 144 random bits: unguessable, and URL-safe.
    const id = randomBytes(18).toString('base64url');
    const session = new Session(id, transport, this.host, now + this.maxInterval);
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
      const held = session.held;
      if (held !== null) {
        if (now >= held.deadline) handler.connectTimedOut(session);
      } else if (now >= session.expiresAt) {
        handler.sessionExpired(session);
      }
    }
  }
}
