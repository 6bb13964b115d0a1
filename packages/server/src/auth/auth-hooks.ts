/**
 * Builds the server's `authenticate`, `canSubscribe` and `canPublish` hooks from token
 * options, channel permissions and (optionally) the application's own hooks, which run
 * after the built-in checks and can only narrow them.
 *
 * The handshake token travels in `ext.auth.token`. A verified token becomes `session.auth`:
 * `{ sub, exp, subscribe?, publish?, claims }`. A refused token rejects with a
 * `HandshakeDeniedError` (error string and advice for the reply).
 */
import { EXT_AUTH, type Message } from '@bayou/protocol';
import { HandshakeDeniedError } from '../errors.js';
import type { AuthenticateHook, ChannelHook } from '../options.js';
import type { ServerSession as Session } from '../session/session.js';
import { PRESENCE_PREFIX } from '../types.js';
import {
  type AuthView,
  type ChannelPermissions,
  createChannelPolicy,
  presencePatterns,
} from './channel-rules.js';
import { createTokenVerifier, type TokenOptions } from './token-verifier.js';

export interface AuthOptions {
  /** Verify a token at every handshake. Default: no tokens (every handshake accepted). */
  tokens?: TokenOptions;
  /** Who may subscribe and publish where; see `channel-rules.ts`. */
  channels?: ChannelPermissions;
  /**
   * With tokens on, accept a handshake that carries no token as an anonymous session
   * (`session.auth = { anonymous: true }`), which only `'anyone'` rules let through.
   * A token that is present but bad is refused regardless. Default `false`.
   */
  allowAnonymous?: boolean;
  /** The application's hooks, run after the built-in checks passed. */
  authenticate?: AuthenticateHook;
  canSubscribe?: ChannelHook;
  canPublish?: ChannelHook;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
}

export interface AuthHooks {
  /** `undefined` when nothing needs checking (no tokens, no application hook). */
  authenticate: AuthenticateHook | undefined;
  /**
   * A session presents a new token (in `ext.auth.token` of a `/meta/connect`): resolves to
   * what `session.auth` becomes (its token fields replaced) when it verifies and names the
   * same `sub`; rejects with a `HandshakeDeniedError` otherwise (the session keeps its old
   * token until that one expires). Without tokens configured, resolves to `null`. It
   * changes nothing: the auth extension applies it once the connect is accepted.
   */
  refresh(session: Session, message: Message): Promise<Record<string, unknown> | null>;
  /** `undefined` when every subscription is allowed. */
  canSubscribe: ChannelHook | undefined;
  canPublish: ChannelHook | undefined;
  readonly tokensOn: boolean;
}

/** What a token handshake stores as `session.auth`. */
export interface TokenAuth {
  sub: string;
  /** Seconds since the epoch, as in the token; `undefined` without `exp`. */
  exp: number | undefined;
  subscribe?: string[];
  publish?: string[];
  claims: Record<string, unknown>;
}

/**
 * When the token behind `auth` stops being valid, in ms since the epoch; `null` for a
 * session without an expiring token. The kernel compares it in its sweep.
 */
export function authExpiresAt(auth: Record<string, unknown> | null): number | null {
  const exp = auth?.exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null;
}

/** The token a handshake (or a refreshing `/meta/connect`) carries in `ext.auth.token`. */
export function tokenOf(message: Message): unknown {
  const auth = message.ext?.[EXT_AUTH];
  if (auth === null || typeof auth !== 'object') return undefined;
  return (auth as { token?: unknown }).token;
}

function andThen(
  first: boolean,
  hook: ChannelHook | undefined,
  session: Session,
  channel: string,
  message: Message,
): boolean | Promise<boolean> {
  if (!first || hook === undefined) return first;
  return hook(session, channel, message);
}

export function createAuthHooks(options: AuthOptions = {}): AuthHooks {
  const now = options.now ?? Date.now;
  const verifier = options.tokens === undefined ? null : createTokenVerifier(options.tokens);
  const tokensOn = verifier !== null;
  const tolerance = (options.tokens?.clockTolerance ?? 5) * 1000;
  const policy = createChannelPolicy(options.channels ?? {}, tokensOn);
  const rulesSet = options.channels?.rules?.length || options.channels?.default !== undefined;
  const presenceOn = presencePatterns(options.channels).length > 0;
  const app = options;

  const expired = (auth: Record<string, unknown> | null): boolean => {
    const at = authExpiresAt(auth);
    return at !== null && at + tolerance <= now();
  };

  let authenticate: AuthenticateHook | undefined;
  if (verifier !== null) {
    authenticate = async (message, request) => {
      const token = tokenOf(message);
      let auth: Record<string, unknown>;
      if (token === undefined && options.allowAnonymous === true) {
        auth = { anonymous: true };
      } else {
        const c = await verifier.verify(token);
        const t: TokenAuth = { sub: c.sub, exp: c.exp, claims: c.payload as Record<string, unknown> };
        if (c.subscribe !== undefined) t.subscribe = c.subscribe;
        if (c.publish !== undefined) t.publish = c.publish;
        auth = t as unknown as Record<string, unknown>;
      }
      if (app.authenticate === undefined) return auth;
      const extra = await app.authenticate(message, request);
      if (extra === false) return false;
      // The token's fields win: an application hook adds to them, never replaces them.
      return extra !== null && typeof extra === 'object' ? { ...extra, ...auth } : auth;
    };
  } else if (app.authenticate !== undefined) {
    authenticate = app.authenticate;
  }

  const channelHook = (
    action: 'subscribe' | 'publish',
    hook: ChannelHook | undefined,
  ): ChannelHook | undefined => {
    if (!tokensOn && !rulesSet) return hook;
    return (session, channel, message) => {
      if (tokensOn && expired(session.auth)) return false;
      let target = channel;
      if (presenceOn && channel.startsWith(PRESENCE_PREFIX)) {
        // Presence events are the server's to publish; following them is reading the channel.
        if (action === 'publish') return false;
        target = channel.slice(PRESENCE_PREFIX.length - 1);
      }
      const ok = policy.allowed(action, target, session.auth as AuthView | null);
      return andThen(ok, hook, session, channel, message);
    };
  };

  const refresh = async (session: Session, message: Message): Promise<Record<string, unknown> | null> => {
    if (verifier === null) return null;
    const c = await verifier.verify(tokenOf(message));
    const current = session.auth as Partial<TokenAuth> | null;
    if (current?.sub !== c.sub)
      throw new HandshakeDeniedError('invalid', 'a refreshed token must name the same "sub"');
    const next: Record<string, unknown> = { ...session.auth, exp: c.exp, claims: c.payload };
    delete next.subscribe;
    delete next.publish;
    if (c.subscribe !== undefined) next.subscribe = c.subscribe;
    if (c.publish !== undefined) next.publish = c.publish;
    return next;
  };

  return {
    authenticate,
    refresh,
    canSubscribe: channelHook('subscribe', app.canSubscribe),
    canPublish: channelHook('publish', app.canPublish),
    tokensOn,
  };
}
