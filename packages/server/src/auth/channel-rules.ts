/**
 * Channel permissions: which sessions may subscribe to or publish on which channels,
 * decided from configured rules and the token's `bayou` claims.
 *
 * - A session whose token carries `bayou.subscribe` (or `bayou.publish`) is decided by
 *   that list alone for that action: the backend that signed the token knows best.
 * - Otherwise the first rule (in order) whose `pattern` covers the channel and that says
 *   something about the action decides; no rule → the default.
 * - A wildcard subscription (`/chat/**`) must also be allowed by every rule guarding a part
 *   of what it covers, so `/**` cannot reach a channel a stricter rule protects.
 * - A pattern may hold `{claim}` placeholders (`/user/{sub}/**`): the rule applies with the
 *   session's claim value in place, and not at all when the claim is missing or not a
 *   valid channel segment.
 */
import { isWildcard, matches, parseChannel } from '@bayou/protocol';
import { optionProblem } from '../option-errors.js';

/** Who may do something on a channel. */
export type Who =
  | 'anyone'
  | 'authenticated'
  | 'nobody'
  /** Sessions whose claim (a dotted path into the token payload) is present and truthy, or equals/contains `equals`. */
  | { claim: string; equals?: string | number | boolean };

export interface ChannelRule {
  /** A channel or pattern (`/chat/*`, `/prices/**`), may hold `{claim}` placeholders. */
  pattern: string;
  /** Who may subscribe. Unset: the rule says nothing about subscribing. */
  subscribe?: Who;
  /** Who may publish (from a client; the server and the publish API always may). */
  publish?: Who;
  /**
   * Keep a member list of each channel this pattern covers: subscribers are members,
   * clients read it on `/service/presence` and follow it on `/presence<channel>`.
   * Default `false`.
   */
  presence?: boolean;
}

export interface ChannelPermissions {
  /** Tried in order; the first that covers the channel and sets the action decides. */
  rules?: ChannelRule[];
  /**
   * When no rule decides. Default with tokens on: `{ subscribe: 'authenticated', publish:
   * 'nobody' }`; without tokens: `{ subscribe: 'anyone', publish: 'anyone' }` (the open server).
   */
  default?: { subscribe?: Who; publish?: Who };
}

/** What the rules need to know about a session: `session.auth` as the auth hooks build it. */
export interface AuthView {
  /** A token's (or an `authenticate` hook's) user, `undefined` for anonymous sessions. */
  sub?: unknown;
  subscribe?: unknown;
  publish?: unknown;
  /** The token payload; `{ claim }` rules read it (or the auth object itself when absent). */
  claims?: unknown;
  anonymous?: unknown;
}

export type Action = 'subscribe' | 'publish';

const SEGMENT = /^[A-Za-z0-9\-_!~()$@.+]+$/;
const PLACEHOLDER = /\{([A-Za-z0-9_.]+)\}/g;

function bad(message: string): never {
  return optionProblem(`option "channels": ${message}`);
}

function checkWho(who: unknown, where: string): void {
  if (who === undefined || who === 'anyone' || who === 'authenticated' || who === 'nobody') return;
  if (who !== null && typeof who === 'object' && typeof (who as { claim?: unknown }).claim === 'string') {
    const eq = (who as { equals?: unknown }).equals;
    if (eq === undefined || ['string', 'number', 'boolean'].includes(typeof eq)) return;
  }
  bad(`${where} must be 'anyone', 'authenticated', 'nobody' or { claim: string, equals?: value }`);
}

/** Checks a permission configuration, throwing a `BayouConfigError` that names the bad part. */
export function checkChannelPermissions(p: ChannelPermissions | undefined): void {
  if (p === undefined) return;
  if (p === null || typeof p !== 'object') bad('must be an object { rules?, default? }');
  if (p.rules !== undefined && !Array.isArray(p.rules)) bad('"rules" must be an array');
  for (const [i, rule] of (p.rules ?? []).entries()) {
    if (rule === null || typeof rule !== 'object') bad(`rules[${i}] must be an object`);
    const sample = typeof rule.pattern === 'string' ? rule.pattern.replace(PLACEHOLDER, 'x') : null;
    if (sample === null || parseChannel(sample) === null)
      bad(`rules[${i}].pattern "${String(rule.pattern)}" is not a channel pattern`);
    checkWho(rule.subscribe, `rules[${i}].subscribe`);
    checkWho(rule.publish, `rules[${i}].publish`);
    if (rule.presence !== undefined && typeof rule.presence !== 'boolean')
      bad(`rules[${i}].presence must be true or false`);
    if (rule.presence === true && rule.pattern.includes('{'))
      bad(`rules[${i}].presence: a pattern with placeholders cannot keep presence`);
  }
  checkWho(p.default?.subscribe, 'default.subscribe');
  checkWho(p.default?.publish, 'default.publish');
}

/** Whether every channel `target` (a channel or a pattern) can reach is matched by `pattern`. */
export function covers(pattern: string, target: string): boolean {
  if (!isWildcard(target)) return matches(pattern, target);
  if (pattern === target) return true;
  if (!pattern.endsWith('/**')) return false;
  // `P/**` covers `Q/*` and `Q/**` when Q is P or below it.
  const base = pattern.slice(0, -3);
  const targetBase = target.slice(0, target.lastIndexOf('/'));
  return base === '' || targetBase === base || targetBase.startsWith(`${base}/`);
}

function claimValue(auth: AuthView, path: string): unknown {
  let value: unknown = auth.claims !== undefined ? auth.claims : auth;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

export function isAuthenticated(auth: AuthView | null): boolean {
  return auth !== null && auth.anonymous !== true;
}

function allows(who: Who, auth: AuthView | null): boolean {
  if (who === 'anyone') return true;
  if (who === 'nobody') return false;
  if (!isAuthenticated(auth)) return false;
  if (who === 'authenticated') return true;
  const value = claimValue(auth as AuthView, who.claim);
  if (who.equals === undefined)
    return value !== undefined && value !== null && value !== false && value !== '';
  return Array.isArray(value) ? value.includes(who.equals) : value === who.equals;
}

/** The rule's pattern for this session, or `null` when a placeholder cannot be filled. */
function instantiate(pattern: string, auth: AuthView | null): string | null {
  if (!pattern.includes('{')) return pattern;
  let ok = true;
  const out = pattern.replace(PLACEHOLDER, (_m, name: string) => {
    const v = auth === null ? undefined : claimValue(auth, name);
    const text = typeof v === 'string' || typeof v === 'number' ? String(v) : '';
    if (!SEGMENT.test(text)) ok = false;
    return text;
  });
  return ok ? out : null;
}

export interface ChannelPolicy {
  /** Whether a session with `auth` may do `action` on `target` (a channel, or a pattern for subscribe). */
  allowed(action: Action, target: string, auth: AuthView | null): boolean;
}

export function createChannelPolicy(permissions: ChannelPermissions = {}, tokensOn = false): ChannelPolicy {
  checkChannelPermissions(permissions);
  const rules = permissions.rules ?? [];
  const defaults: Record<Action, Who> = {
    subscribe: permissions.default?.subscribe ?? (tokensOn ? 'authenticated' : 'anyone'),
    publish: permissions.default?.publish ?? (tokensOn ? 'nobody' : 'anyone'),
  };
  return {
    allowed(action, target, auth) {
      const granted = auth?.[action];
      if (Array.isArray(granted)) {
        return granted.some((p) => typeof p === 'string' && covers(p, target));
      }
      let decided: Who | undefined;
      let decidedBy = -1;
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i] as ChannelRule;
        const who = rule[action];
        if (who === undefined) continue;
        const pattern = instantiate(rule.pattern, auth);
        if (pattern !== null && covers(pattern, target)) {
          decided = who;
          decidedBy = i;
          break;
        }
      }
      if (!allows(decided ?? defaults[action], auth)) return false;
      if (!isWildcard(target)) return true;
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i] as ChannelRule;
        const who = rule[action];
        if (i === decidedBy || who === undefined) continue;
        // A placeholder rule guards a subtree of per-user channels: compare its fixed prefix.
        const guarded = rule.pattern.includes('{')
          ? reachesPlaceholder(target, rule.pattern)
          : covers(target, rule.pattern);
        if (guarded && !allows(who, auth)) return false;
      }
      return true;
    },
  };
}

/**
 * Whether a wildcard subscription reaches channels of a placeholder rule: the rule's
 * pattern up to its first placeholder lies within what the subscription covers.
 */
function reachesPlaceholder(target: string, rulePattern: string): boolean {
  const cut = rulePattern.indexOf('{');
  const prefix = rulePattern.slice(0, rulePattern.lastIndexOf('/', cut));
  const base = target.slice(0, target.lastIndexOf('/'));
  if (target.endsWith('/**')) return base === '' || prefix === base || prefix.startsWith(`${base}/`);
  // `B/*` reaches one level below B: the placeholder's segment, when it sits right there.
  return prefix === base;
}

/** The patterns whose channels keep presence (rules with `presence: true`), in order. */
export function presencePatterns(permissions: ChannelPermissions | undefined): string[] {
  return (permissions?.rules ?? []).filter((r) => r.presence === true).map((r) => r.pattern);
}
