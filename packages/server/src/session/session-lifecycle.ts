/**
 * The life of a server session as one state machine, as the client's `state.ts` is:
 *
 *   handshaken ──connect──▶ polling (a connect held on a long-poll request)
 *        │                  carried (bound to a carrier that pushes: a WebSocket, a
 *        │                     │     stream; a connect may be held on it)
 *        │      answered, aborted, carrier closed
 *        │                     ▼
 *        └──────────────▶ expiring (no carrier; removed at `expiresAt` unless a connect comes)
 *                              │
 *                              ▼
 *                           removed
 *
 * `transition` is the only writer of the state, the carrier, the held connect and the
 * deadlines; everything else reads them. The kernel calls it through its registry's
 * `transition` (`session-registry.ts`), which files the deadline it leaves for the sweep. An illegal transition is a programmer error and
 * throws, so a bug shows at once instead of as a session that never expires.
 */
import type { Carrier, ConnectCarrier } from './carrier.js';

/** A held long-poll request: a carrier whose `answer` writes one Bayeux array and ends it. */
export type PendingPoll = ConnectCarrier;

export interface HeldConnect {
  /** The `id` of the held connect; its reply is built when it completes. */
  readonly id: string | undefined;
  /** When the sweep answers it if nothing else did. */
  readonly deadline: number;
  /** `null` when the connect is held on a carrier that pushes. */
  readonly poll: PendingPoll | null;
  readonly browserId: string | null;
}

export type SessionState = 'handshaken' | 'polling' | 'carried' | 'expiring' | 'removed';

/** What may follow what. */
export const TRANSITIONS: Readonly<Record<SessionState, readonly SessionState[]>> = Object.freeze({
  handshaken: ['polling', 'carried', 'expiring', 'removed'],
  polling: ['expiring', 'removed'],
  carried: ['carried', 'polling', 'expiring', 'removed'],
  expiring: ['expiring', 'polling', 'carried', 'removed'],
  removed: [],
});

export type LifecycleEvent =
  /** A connect held on a long-poll request until `deadline`. */
  | { readonly type: 'hold-poll'; readonly held: HeldConnect }
  /** Bound to `carrier`, with a connect held on it (`held`) or none. */
  | { readonly type: 'bind-carrier'; readonly carrier: Carrier; readonly held: HeldConnect | null }
  /** The held connect was answered (or aborted); the carrier, if one that pushes, stays. */
  | { readonly type: 'release' }
  /** A connect answered at once on a long-poll: no carrier until the next one. */
  | { readonly type: 'detach' }
  /** The carrier went away. */
  | { readonly type: 'carrier-closed' }
  | { readonly type: 'remove' };

export interface Lifecycle {
  state: SessionState;
  carrier: Carrier | null;
  held: HeldConnect | null;
  /** When the session expires if no connect is held. */
  expiresAt: number;
}

export class IllegalTransition extends Error {
  constructor(from: SessionState, to: SessionState, event: string) {
    super(`illegal session transition ${from} → ${to} (${event})`);
    this.name = 'IllegalTransition';
  }
}

function move(l: Lifecycle, to: SessionState, event: LifecycleEvent): void {
  if (!TRANSITIONS[l.state].includes(to)) throw new IllegalTransition(l.state, to, event.type);
  l.state = to;
}

/**
 * Applies `event` at time `now`; `maxInterval` is how long a session without a carrier
 * lives. Returns the connect the event released, if any, for the caller to answer.
 */
export function transition(
  l: Lifecycle,
  event: LifecycleEvent,
  now: number,
  maxInterval: number,
): HeldConnect | null {
  const released = l.held;
  switch (event.type) {
    case 'hold-poll':
      move(l, 'polling', event);
      l.held = event.held;
      l.carrier = null;
      l.expiresAt = Number.POSITIVE_INFINITY;
      return released;
    case 'bind-carrier':
      move(l, 'carried', event);
      l.carrier = event.carrier;
      l.held = event.held;
      l.expiresAt =
        event.held === null && !event.carrier.kind.keepsSession
          ? now + maxInterval
          : Number.POSITIVE_INFINITY;
      return released;
    case 'release':
      if (l.held === null) return null;
      l.held = null;
      l.expiresAt = now + maxInterval;
      if (l.state === 'polling') move(l, 'expiring', event);
      return released;
    case 'detach':
      if (l.held !== null) throw new IllegalTransition(l.state, 'expiring', 'detach with a held connect');
      move(l, 'expiring', event);
      l.carrier = null;
      l.expiresAt = now + maxInterval;
      return null;
    case 'carrier-closed':
      if (l.carrier === null) return null;
      l.carrier = null;
      if (l.state === 'carried') {
        move(l, 'expiring', event);
        l.held = null;
        l.expiresAt = now + maxInterval;
        return released;
      }
      return null;
    case 'remove':
      if (l.state === 'removed') return null;
      move(l, 'removed', event);
      l.held = null;
      l.carrier = null;
      return released;
  }
}

/** What the shared sweep must do with a session at `now`. */
export function due(l: Lifecycle, now: number): 'answer' | 'expire' | null {
  if (l.state === 'removed') return null;
  if (l.held !== null) return now >= l.held.deadline ? 'answer' : null;
  return now >= l.expiresAt ? 'expire' : null;
}

/** The next time the sweep has something to do with a session: its held connect's deadline, else its expiry (`Infinity`: none, or removed). */
export function nextDeadline(l: Lifecycle): number {
  if (l.state === 'removed') return Number.POSITIVE_INFINITY;
  return l.held !== null ? l.held.deadline : l.expiresAt;
}
