/**
 * The auth extension: what tokens mean after the handshake (which `authenticate` decides).
 *
 * - **Refresh.** A `/meta/connect` carrying `ext.auth.token` presents a new token for its
 *   session (`AuthHooks.refresh`: same `sub`, valid signature). Accepted, it replaces the
 *   session's token fields (expiry and channel claims); refused, the connect is answered
 *   with `403::handshake_denied` and the token error's advice (`handshake` for an expired
 *   token, `none` for a bad one), and the session keeps its old token until that expires.
 * - **Expiry.** A session whose token expires (plus the clock tolerance) is ended with
 *   advice to handshake again: its held connect is answered with `reconnect: handshake`.
 *   Expiries sit in a wheel of `tick`-ms slots swept by one shared timer (the plugin's),
 *   so there is no timer per session and a sweep touches only the sessions due.
 * - **Browser binding.** Unless `trustClientSession`, a long-poll naming a session must
 *   carry the `BAYEUX_BROWSER` cookie that session was created with; otherwise the
 *   message is answered as for an unknown session (`402::session_unknown`), so a clientId
 *   copied from a log cannot be used from another browser.
 */
import { formatError, META_CONNECT, META_HANDSHAKE, type Message } from '@bayou/protocol';
import { type AuthHooks, authExpiresAt, tokenOf } from '../auth/auth-hooks.js';
import type { Extension, Refusal, Reply } from '../bayeux/extensions.js';
import { HandshakeDeniedError } from '../errors.js';
import type { ServerSession, Session } from '../session/session.js';
import type { RequestInfo } from '../types.js';

export interface AuthExtensionOptions {
  /** `null` when no tokens are configured (only the browser binding applies). */
  hooks: Pick<AuthHooks, 'refresh'> | null;
  /** Ends a session whose token expired (the kernel removes it, advising a new handshake). */
  expire(session: ServerSession): void;
  /** Accept long-polls without the session's browser cookie. */
  trustClientSession: boolean;
  /** Width of the expiry wheel's slots, in ms: the sweep period. */
  tick: number;
  /** Seconds a token is still honoured after its `exp`. Default `5`. */
  clockTolerance?: number;
  now?: () => number;
}

const UNKNOWN: Refusal = Object.freeze({
  error: formatError('sessionUnknown'),
  advice: Object.freeze({ reconnect: 'handshake', interval: 0 }),
});

export class AuthExtension implements Extension {
  readonly name = 'auth';
  readonly stage = 'guard';
  /** Sessions by the wheel slot their token expires in. */
  private readonly slots = new Map<number, Set<ServerSession>>();
  /** The slot each watched session is filed under (kept off the session, which stays small). */
  private readonly slotOf = new WeakMap<ServerSession, number>();
  /** The last slot swept. */
  /** A verified token's auth, until its connect is accepted (or dropped with the message). */
  private readonly refreshed = new WeakMap<Message, Record<string, unknown>>();
  private cursor: number;
  private readonly tolerance: number;
  private readonly now: () => number;
  /** Tokens refreshed and refused, for metrics. */
  readonly stats = { refreshed: 0, refreshRefused: 0, expired: 0, browserMismatch: 0 };

  constructor(private readonly options: AuthExtensionOptions) {
    this.now = options.now ?? Date.now;
    this.tolerance = (options.clockTolerance ?? 5) * 1000;
    this.cursor = Math.floor(this.now() / options.tick);
  }

  /** Sessions whose token expiry is being watched. */
  get watched(): number {
    let n = 0;
    for (const set of this.slots.values()) n += set.size;
    return n;
  }

  incoming(
    message: Message,
    session: ServerSession | null,
    request: RequestInfo,
  ): Refusal | undefined | Promise<Refusal | undefined> {
    if (session === null) return undefined;
    if (!this.options.trustClientSession && this.strangerTo(session as Session, request)) {
      this.stats.browserMismatch++;
      return UNKNOWN;
    }
    const hooks = this.options.hooks;
    if (hooks === null || message.channel !== META_CONNECT || tokenOf(message) === undefined)
      return undefined;
    return hooks.refresh(session, message).then(
      (next) => {
        if (next !== null) this.refreshed.set(message, next);
        return undefined;
      },
      (err: unknown): Refusal => {
        this.stats.refreshRefused++;
        if (err instanceof HandshakeDeniedError) return { error: err.bayeuxError, advice: err.advice };
        throw err;
      },
    );
  }

  /** A refreshed token takes effect only with a connect every stage accepted. */
  accepted(message: Message, session: ServerSession): void {
    const next = this.refreshed.get(message);
    if (next === undefined) return;
    this.refreshed.delete(message);
    (session as Session).setAuth(next);
    this.stats.refreshed++;
    this.watch(session);
  }

  /**
   * A request that must not act for `session`: a carrier bound to its browser (a long-poll,
   * a stream's POST) must carry the session's cookie, or none for a session made without
   * one; any other carrier (a WebSocket) must carry it when the session has one.
   */
  private strangerTo(session: Session, request: RequestInfo): boolean {
    const given = request.browserId ?? null;
    if (request.carrier.browserBound) return session.browserId !== given;
    return session.browserId !== null && session.browserId !== given;
  }

  outgoing(reply: Reply, request: Message, session: ServerSession | null): void {
    if (request.channel === META_HANDSHAKE && reply.successful === true && session !== null)
      this.watch(session);
  }

  removed(session: ServerSession): void {
    this.unwatch(session);
  }

  /** Ends the sessions whose token expired by `now`. Called by the shared sweep. */
  sweep(now = this.now()): void {
    const target = Math.floor(now / this.options.tick);
    if (target <= this.cursor) return;
    const due: number[] = [];
    if (target - this.cursor <= this.slots.size) {
      for (let s = this.cursor + 1; s <= target; s++) if (this.slots.has(s)) due.push(s);
    } else {
      for (const s of this.slots.keys()) if (s <= target) due.push(s);
    }
    this.cursor = target;
    for (const slot of due) {
      const sessions = this.slots.get(slot) as Set<ServerSession>;
      this.slots.delete(slot);
      for (const session of sessions) {
        this.slotOf.delete(session);
        this.stats.expired++;
        this.options.expire(session);
      }
    }
  }

  /** (Re)files `session` under the slot its current token expires in. */
  private watch(session: ServerSession): void {
    this.unwatch(session);
    const at = authExpiresAt(session.auth);
    if (at === null) return;
    // Never file into a slot already swept: that session is due at the next sweep.
    const slot = Math.max(Math.ceil((at + this.tolerance) / this.options.tick), this.cursor + 1);
    let set = this.slots.get(slot);
    if (set === undefined) {
      set = new Set();
      this.slots.set(slot, set);
    }
    set.add(session);
    this.slotOf.set(session, slot);
  }

  private unwatch(session: ServerSession): void {
    const slot = this.slotOf.get(session);
    if (slot === undefined) return;
    this.slotOf.delete(session);
    const set = this.slots.get(slot);
    if (set === undefined) return;
    set.delete(session);
    if (set.size === 0) this.slots.delete(slot);
  }
}
