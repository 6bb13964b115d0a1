/**
 * Presence for clients: the subscribers of a channel that a `presence: true` channel rule
 * covers are its members. A join or leave goes to the engine's member list (cluster-wide)
 * and is announced as `{ action, member }` on `/presence<channel>` through the broker, so
 * followers on every node see it; a dead node's members are announced by the one node
 * whose liveness sweep found it dead (`lost`). The application hears the same as the
 * `presence:join` / `presence:leave` events, once per change in the cluster.
 */
import { formatError, type Message, matches, parseChannel, presenceChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { Engine, HistoryPolicy, LostMember, MaybePromise, PresenceMember } from '../engine/engine.js';
import type { Session } from '../session/session.js';
import { PRESENCE_PREFIX } from '../types.js';
import type { EventSink } from './events.js';
import { andThen } from './hooks.js';

/** What the tracker needs of its kernel. */
export interface PresenceHost {
  readonly engine: Engine;
  readonly log: FastifyBaseLogger;
  engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined>;
  emitSafe(run: (events: EventSink) => void): boolean;
}

/** A member as clients see it. */
export interface PresenceView {
  clientId: string;
  user: string | null;
  info: Record<string, unknown>;
}

/** Largest `info` of one member, serialized, in bytes: it travels with every join. */
export const MAX_INFO_BYTES = 1024;
const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };

export class PresenceTracker {
  /** channel → clientId → member, for this node's members; a channel goes with its last one. */
  private readonly local = new Map<string, Map<string, PresenceMember>>();
  /** Engine calls under way, awaited before the engine closes. */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly patterns: readonly string[],
    private readonly host: PresenceHost,
  ) {}

  get enabled(): boolean {
    return this.patterns.length > 0;
  }

  /** Channels of this node that have members here now (for tests and metrics). */
  get localChannels(): number {
    return this.local.size;
  }

  /** Whether `channel` keeps a member list: a concrete broadcast channel a presence rule covers. */
  covers(channel: string): boolean {
    if (this.patterns.length === 0 || channel.startsWith(PRESENCE_PREFIX)) return false;
    const info = parseChannel(channel);
    if (info === null || info.kind !== 'broadcast' || info.wildcard !== null) return false;
    return this.patterns.some((p) => matches(p, channel));
  }

  /** `session` subscribed to `channel`: it becomes a member; resolves with an error string on failure. */
  join(session: Session, channel: string, message: Message): MaybePromise<string | undefined> {
    if (!this.covers(channel) || this.local.get(channel)?.has(session.id) === true) return undefined;
    const member = memberOf(session, message);
    if (typeof member === 'string') return member;
    let byClient = this.local.get(channel);
    if (byClient === undefined) {
      byClient = new Map();
      this.local.set(channel, byClient);
    }
    byClient.set(session.id, member);
    const stored = this.host.engineCall(
      () => this.track(this.host.engine.presence.join(channel, member)),
      () => this.forget(channel, session.id),
    );
    return andThen(stored, (error) => {
      if (error === undefined && this.local.get(channel)?.get(session.id) === member) {
        this.changed(channel, 'join', member);
      }
      return error;
    });
  }

  /** `session` left `channel` (unsubscribed, or the session ended). */
  leave(session: Session, channel: string): void {
    const member = this.forget(channel, session.id);
    if (member === undefined) return;
    const left = this.track(this.host.engine.presence.leave(channel, session.id));
    left.then(
      () => this.changed(channel, 'leave', member),
      (err: unknown) => this.host.log.warn({ err, channel }, 'presence leave failed'),
    );
  }

  /** Members of a dead node, reported by the engine to this node only. */
  lost(members: readonly LostMember[]): void {
    for (const { channel, member } of members) this.changed(channel, 'leave', member);
  }

  /** This node's members, after the cluster had reported them left (see `membersRestored`). */
  restored(members: readonly LostMember[]): void {
    for (const { channel, member } of members)
      if (this.local.get(channel)?.get(member.clientId) === member) this.changed(channel, 'join', member);
  }

  /** The cluster-wide members of `channel`, as clients see them. */
  async members(channel: string): Promise<PresenceView[]> {
    return (await this.host.engine.presence.members(channel)).map(view);
  }

  /** Resolves once the joins, leaves and announcements under way are done. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private forget(channel: string, clientId: string): PresenceMember | undefined {
    const byClient = this.local.get(channel);
    const member = byClient?.get(clientId);
    if (member === undefined) return undefined;
    byClient?.delete(clientId);
    if (byClient?.size === 0) this.local.delete(channel);
    return member;
  }

  /** Announces a change on `/presence<channel>` on every node, and to the application here. */
  private changed(channel: string, action: 'join' | 'leave', member: PresenceMember): void {
    const to = presenceChannel(channel);
    const payload = JSON.stringify({ channel: to, data: { action, member: view(member) } });
    void this.track(Promise.resolve(this.host.engine.broker.publish(to, payload, NO_HISTORY))).catch(
      (err: unknown) => this.host.log.warn({ err, channel }, 'presence announcement failed'),
    );
    this.host.emitSafe((e) =>
      action === 'join'
        ? e.emit('presence:join', channel, member)
        : e.emit('presence:leave', channel, member),
    );
  }

  private track<T>(p: MaybePromise<T>): Promise<T> {
    const promise = Promise.resolve(p);
    this.pending.add(promise);
    const done = (): void => {
      this.pending.delete(promise);
    };
    promise.then(done, done);
    return promise;
  }
}

function view(m: PresenceMember): PresenceView {
  return { clientId: m.clientId, user: m.user ?? null, info: { ...(m.info ?? {}) } };
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The member a subscribe makes: the session's user (`sub` of its token or of what the
 * `authenticate` hook returned), and info from the subscribe's `ext.presence.info` with
 * the token's `bayou.info` claim over it (the token is the backend's word).
 */
function memberOf(session: Session, message: Message): PresenceMember | string {
  const auth = session.auth;
  const sub = auth?.sub;
  const user = typeof sub === 'string' || typeof sub === 'number' ? String(sub) : undefined;
  const ext = (message.ext as { presence?: unknown } | undefined)?.presence;
  let given: Record<string, unknown> = {};
  if (ext !== undefined) {
    const info = plainObject(ext) ? ext.info : ext;
    if (info !== undefined && !plainObject(info)) return formatError('messageInvalid', ['ext.presence.info']);
    if (info !== undefined) given = info;
  }
  const claims = auth?.claims;
  const bayou = plainObject(claims) ? claims.bayou : undefined;
  const fromToken = plainObject(bayou) && plainObject(bayou.info) ? bayou.info : {};
  const info = { ...given, ...fromToken };
  if (Buffer.byteLength(JSON.stringify(info)) > MAX_INFO_BYTES)
    return formatError('messageTooLarge', [MAX_INFO_BYTES]);
  const hasInfo = Object.keys(info).length > 0;
  return {
    clientId: session.id,
    ...(user !== undefined ? { user } : {}),
    ...(hasInfo ? { info } : {}),
  };
}
