/**
 * How sessions end, and the two things that end them without a request: a queue past its
 * bounds (a slow consumer) and the shared sweep (a held connect's deadline, an expired
 * session). It is the sessions' `SessionHost` and the registry's `SweepHandler`.
 */
import { formatError } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { ExtensionPipeline } from '../bayeux/extensions.js';
import type { ResolvedOptions } from '../options.js';
import type { Outbound } from '../session/outbound.js';
import type { ServerSession, Session, SessionHost } from '../session/session.js';
import type { SessionRegistry, SweepHandler } from '../session/session-registry.js';
import type { RemovalReason } from '../types.js';
import type { Connects } from './connects.js';
import type { Guards } from './guards.js';
import type { KernelStats } from './kernel-stats.js';
import type { PresenceTracker } from './presence-tracker.js';
import type { SessionHandovers } from './session-handover.js';
import type { Subscriptions } from './subscriptions.js';

/** Advice to a session that ended: handshake again (after a shutdown, at once). */
const HANDSHAKE = Object.freeze({ reconnect: 'handshake' });
const HANDSHAKE_NOW = Object.freeze({ reconnect: 'handshake', interval: 0 });
const SHUTDOWN_ERROR = formatError('sessionUnknown');
/** A paced drain ends at least one session every this many ms: a few sessions need no window. */
export const DRAIN_STEP_MS = 5;
/** A window shorter than this (fewer than 20 sessions) is no storm: they all end at once. */
const DRAIN_MIN_WINDOW_MS = 100;
/** The most a session ended by a paced drain is told to wait before it handshakes again. */
const DRAIN_JITTER_MS = 1000;

export interface SessionEndsParts {
  readonly options: Pick<ResolvedOptions, 'maxInterval' | 'maxQueuedMessages' | 'maxQueuedBytes'>;
  readonly log: FastifyBaseLogger;
  readonly stats: KernelStats;
  readonly registry: () => SessionRegistry;
  readonly connects: () => Connects;
  readonly outbound: () => Outbound;
  readonly subscriptions: Subscriptions;
  readonly presence: PresenceTracker;
  readonly extensions: ExtensionPipeline;
  readonly guards: Guards;
  /** Hands sessions over to other nodes at a drain (an engine shared by several nodes), else `null`. */
  readonly handovers: () => SessionHandovers | null;
}

export class SessionEnds implements SessionHost, SweepHandler {
  readonly maxQueuedMessages: number;
  readonly maxQueuedBytes: number;

  constructor(private readonly p: SessionEndsParts) {
    this.maxQueuedMessages = p.options.maxQueuedMessages;
    this.maxQueuedBytes =
      p.options.maxQueuedBytes === 0 ? Number.POSITIVE_INFINITY : p.options.maxQueuedBytes;
  }

  /** The advice a session ended by a shutdown gets: at once, or a paced drain's interval. */
  private shutdownAdvice: Readonly<Record<string, unknown>> = HANDSHAKE_NOW;

  removeSession(session: Session, reason: RemovalReason): void {
    if (session.state === 'removed') return;
    const held = session.held !== null;
    const connects = this.p.connects();
    if (held) {
      // A node going away refuses the connect (402 + handshake): the client handshakes on
      // another node and recovers from the engine's history what it had not received.
      if (reason === 'shutdown') connects.complete(session, this.shutdownAdvice, true, SHUTDOWN_ERROR);
      else connects.complete(session, HANDSHAKE);
    }
    // On a carrier that pushes the reply was queued: send it, and on shutdown whatever was
    // queued, before the queue is dropped (not to a reader already too slow). Sending may
    // itself find the reader slow and remove the session: then that removal was the whole of it.
    if (
      (held || reason === 'shutdown') &&
      reason !== 'slow-consumer' &&
      session.carrier !== null &&
      session.queue.length > 0
    ) {
      this.p.outbound().flush(session);
      const live = this.p.registry().get(session.id);
      if (live !== session || live.state === 'removed') return;
    }
    this.p.registry().transition(session, { type: 'remove' }, Date.now(), this.p.options.maxInterval);
    this.p.stats.removed[reason]++;
    this.p.registry().delete(session);
    for (const name of [...session.subscriptions]) {
      if (this.p.presence.enabled) this.p.presence.leave(session, name);
      this.p.subscriptions.drop(session, name);
    }
    session.drain();
    if (reason !== 'handover') this.p.handovers()?.ended(session);
    this.p.extensions.removed(session);
    this.p.guards.emitSafe((e) => e.emit('session:removed', session as ServerSession, reason));
  }

  scheduleFlush(session: Session): void {
    this.p.outbound().schedule(session);
  }

  overflow(session: Session): boolean {
    if (session.carrier !== null) {
      // A carrier that pushes drains every turn; a burst larger than the queue goes out early, and
      // the socket's own buffer (maxBufferedBytes) decides whether the reader is slow.
      this.p.outbound().flush(session);
      if (
        session.state !== 'removed' &&
        session.queue.length < this.maxQueuedMessages &&
        session.queuedBytes < this.maxQueuedBytes
      )
        return true;
      if (session.state !== 'removed') this.dropSlowConsumer(session);
      return false;
    }
    this.dropSlowConsumer(session);
    return false;
  }

  dropSlowConsumer(session: Session): void {
    if (session.state === 'removed') return;
    this.p.stats.slowConsumers++;
    this.p.log.warn(
      { clientId: session.id, queued: session.queue.length, queuedBytes: session.queuedBytes },
      'slow consumer: queue limit reached, session dropped',
    );
    // What it could not take is dropped; a held connect is told to handshake again.
    session.drain();
    session.carrier?.end(1008, 'slow consumer');
    this.removeSession(session, 'slow-consumer');
  }

  connectTimedOut(session: Session): void {
    this.p.connects().complete(session);
  }

  sessionExpired(session: Session): void {
    if (session.carrier !== null) this.expiredOnOpenCarrier(session);
    this.removeSession(session, 'timeout');
  }

  /** Sessions expired with their carrier still open since the last warning, and when that was. */
  private openExpiries = { count: 0, warnedAt: Number.NEGATIVE_INFINITY };

  /**
   * A session that expires while its carrier (a WebSocket) is still open had its connect
   * answered and no next connect within its wait (`Connects.waitOf`: `maxInterval`, and two
   * heartbeats more for a heartbeat session): a client too busy to answer, or a
   * connect that waited that long somewhere. Its client will be told `402` on that next
   * connect. Said at warn level, at most once a minute with the count since.
   */
  private expiredOnOpenCarrier(session: Session): void {
    const o = this.openExpiries;
    o.count++;
    const now = Date.now();
    if (now - o.warnedAt < 60_000) return;
    this.p.log.warn(
      {
        clientId: session.id,
        carrier: session.carrier?.kind.name,
        sinceReplyMs: now - (session.expiresAt - this.p.connects().waitOf(session)),
        expiredOnOpenCarrier: o.count,
      },
      'session expired with its connection open: no connect came within its wait (maxInterval, and two heartbeats more for a heartbeat session) of the previous connect reply (its next connect is answered 402)',
    );
    o.count = 0;
    o.warnedAt = now;
  }

  /**
   * Graceful shutdown, first step (the app stops taking requests meanwhile): every session
   * of this node ends now. What is queued goes out where a carrier can take it (a held
   * long-poll's reply, a WebSocket), then the session's held connect, or its next one, is
   * answered `402::session_unknown` with `reconnect: handshake`, so its client handshakes
   * again on another node and resubscribes from the last position it received. What it had
   * not received yet was published through the engine: with history on the channel (shared
   * in Redis), the replay extension sends it again; with the memory engine it is lost. On an
   * engine several nodes share, each session is handed over instead (`session-handover.ts`):
   * its client carries on with the same clientId on another node (advice `retry`).
   *
   * With a `spread` (ms, `drainSpread`) the sessions end in a random order spread evenly
   * over a window — `spread`, or less for a few sessions (one every `DRAIN_STEP_MS` at
   * least; under 20 sessions all at once) — each advised to handshake after a random interval of up to a second, so the
   * other nodes see a ramp, not a wall; the others are served meanwhile. A session ended so
   * gets its queue first, as above, and a WebSocket is closed (1001) after its 402. Resolves
   * once the last has ended; sessions made meanwhile are for the caller's next call.
   */
  drainForShutdown(spread = 0, random: () => number = Math.random): Promise<void> {
    const registry = this.p.registry();
    registry.stopSweeping();
    this.p.handovers()?.draining();
    const sessions = [...registry.values()];
    const window = Math.min(spread, sessions.length * DRAIN_STEP_MS);
    const handing: Promise<void>[] = [];
    if (window < DRAIN_MIN_WINDOW_MS) {
      for (const session of sessions) {
        if (this.p.handovers() === null) this.removeSession(session, 'shutdown');
        else handing.push(this.handOver(session, 0));
      }
      return Promise.all(handing).then(() => undefined);
    }
    for (let i = sessions.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [sessions[i], sessions[j]] = [sessions[j] as Session, sessions[i] as Session];
    }
    const start = Date.now();
    const jitter = Math.min(window, DRAIN_JITTER_MS);
    let ended = 0;
    return new Promise((resolve) => {
      const step = (): void => {
        const due = Math.min(sessions.length, Math.ceil(((Date.now() - start) / window) * sessions.length));
        while (ended < due) {
          const session = sessions[ended++] as Session;
          const interval = 1 + Math.floor(random() * jitter);
          if (this.p.handovers() === null) this.endPaced(session, interval);
          else handing.push(this.handOver(session, interval));
        }
        if (ended < sessions.length) return;
        clearInterval(timer);
        void Promise.all(handing).then(() => resolve());
      };
      const timer = setInterval(step, DRAIN_STEP_MS);
      step();
    });
  }

  /**
   * Hands `session` over to whichever node its client reconnects to (its held connect told
   * to `retry` after `interval` ms, `session-handover.ts`); ended as before when the engine
   * could not take its record.
   */
  /**
   * Hands the session of `clientId` over now (another node has a WebSocket for it: a
   * WebSocket is served where it is open); `false` when there is none here or no handovers.
   */
  async handOverNow(clientId: string): Promise<boolean> {
    const session = this.p.registry().get(clientId);
    const handovers = this.p.handovers();
    if (session === undefined || session.state === 'removed' || handovers === null) return false;
    return handovers.handOver(session, 0);
  }

  private async handOver(session: Session, interval: number): Promise<void> {
    const handovers = this.p.handovers() as SessionHandovers;
    if (await handovers.handOver(session, interval)) return;
    this.endPaced(session, interval);
  }

  private endPaced(session: Session, interval: number): void {
    if (session.state === 'removed') return;
    const carrier = session.carrier;
    this.shutdownAdvice = { reconnect: 'handshake', interval };
    try {
      this.removeSession(session, 'shutdown');
    } finally {
      this.shutdownAdvice = HANDSHAKE_NOW;
    }
    carrier?.end(1001, 'server shutting down');
  }
}
