/**
 * All sessions of this node, and the one shared sweep (every `sweepInterval` ms, as
 * CometD does) that answers held connects past their deadline and expires sessions whose
 * client stopped connecting. No timer per session, and no visit of every session per sweep:
 * the deadlines wait on a wheel (`deadline-wheel.ts`) and a sweep takes only those due. Every
 * lifecycle transition of a registered session goes through `transition` here, which files
 * the deadline it leaves.
 *
 * A clientId is `<nodeId>.<144 random bits>`: unguessable, URL-safe, and it names the node
 * that owns the session, so any node of a cluster knows where to forward without a lookup.
 */
import { RandomIds } from '../random-ids.js';
import type { CarrierKind } from './carrier.js';
import { DeadlineWheel } from './deadline-wheel.js';
import { Session, type SessionHost } from './session.js';
import { due, type HeldConnect, type LifecycleEvent, nextDeadline, transition } from './session-lifecycle.js';

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

  /** Every registered session with a deadline, under it. */
  private readonly deadlines: DeadlineWheel<Session>;

  /** `tick`: the sweep interval the wheel's slots are cut to (any value is correct; this one is cheapest). */
  constructor(
    private readonly host: SessionHost,
    private readonly maxInterval: number,
    readonly nodeId: string,
    tick = 1000,
  ) {
    this.deadlines = new DeadlineWheel<Session>(tick, nextDeadline, Date.now());
  }

  create(kind: CarrierKind, now = Date.now()): Session {
    return this.add(
      new Session(`${this.nodeId}.${this.ids.next()}`, kind, this.host, now + this.maxInterval),
    );
  }

  /** A session another node handed over (issue #35), under its own clientId. */
  adopt(id: string, kind: CarrierKind, now = Date.now()): Session {
    return this.add(new Session(id, kind, this.host, now + this.maxInterval));
  }

  private add(session: Session): Session {
    this.sessions.set(session.id, session);
    this.deadlines.file(session);
    return session;
  }

  /**
   * Applies a lifecycle event to `session` (`session-lifecycle.ts`, `wait`: how long it lives
   * without a connect from `now`) and files the deadline it leaves: the one way the kernel
   * moves a session's state, carrier, held connect or deadlines.
   */
  transition(session: Session, event: LifecycleEvent, now: number, wait: number): HeldConnect | null {
    const released = transition(session, event, now, wait);
    this.deadlines.file(session);
    return released;
  }

  /** Sessions with a deadline on the wheel (those not removed, held on no stream). */
  get waiting(): number {
    return this.deadlines.size;
  }

  get(id: unknown): Session | undefined {
    return typeof id === 'string' ? this.sessions.get(id) : undefined;
  }

  delete(session: Session): boolean {
    this.deadlines.drop(session);
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

  /**
   * Answers the held connects and expires the sessions due at `now`: only those the wheel
   * holds as due are looked at. Each is filed again after (the handler's transition filed it
   * already; one whose deadline nothing moved is due again next sweep, as it would be seen).
   */
  sweep(handler: SweepHandler, now: number): void {
    for (const session of this.deadlines.due(now)) {
      const what = due(session, now);
      if (what === 'answer') handler.connectTimedOut(session);
      else if (what === 'expire') handler.sessionExpired(session);
      if (this.sessions.get(session.id) === session) this.deadlines.file(session);
    }
  }
}
