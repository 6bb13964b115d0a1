/**
 * The replay extension: recovery of what a client missed, from the engine's history.
 *
 * - A handshake with `ext.replay: true` negotiates it: the reply says `ext.replay: true`
 *   and every message delivered to that session carries its position,
 *   `ext.replay: { offset, epoch }`. Other clients see nothing different.
 * - A subscribe whose `ext.replay` maps a channel to the last position the client saw
 *   gets, after its reply, everything the channel carried since — in order, before any
 *   live message, with no duplicate — and the reply says `recovered: true`; when history
 *   cannot cover the gap (trimmed, expired, another epoch) it says `recovered: false`.
 *   Either way the reply gives the channel's current position.
 * - Wildcard and record subscriptions are not recovered (records send a fresh snapshot).
 * - When the node itself lost messages it cannot recover (its engine connection was silent
 *   or cut, and the channel keeps no history), each session subscribed gets a gap notice,
 *   `{"channel":"/meta/gap","ext":{"replay":{"<subscription>":{"recovered":false}}}}`.
 *
 * From before the session joins the channel until the history is fetched, live messages
 * on that channel are held for the session and then released after the recovered ones,
 * minus duplicates. A live copy of a recovered message may also come in after that: with
 * Redis, the history is read on one connection and pub/sub arrives on another, and the
 * node may read the history reply first. So the channel keeps the last recovered position
 * as a floor, and a live message at or before it is dropped, until the first one after it
 * passes (pub/sub keeps a channel's order, so none older can follow). The positions, the
 * holding and the floor are all in the extension's `beforeEnqueue` hook, which a session
 * that negotiated replay passes on every delivery; other sessions never reach it.
 */
import {
  EXT_REPLAY,
  formatError,
  GAP_CHANNEL,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  type Message,
  type StreamPosition,
} from '@bayou/protocol';
import type { Extension, Reply } from '../bayeux/extensions.js';
import type { History, Publication, Recovery } from '../engine/engine.js';
import type { ExtensionSession, PublicationDelivery } from '../session/session.js';

const ENGINE_UNAVAILABLE = formatError('engineUnavailable');

/** What a subscribe prepared for one channel, until its reply went out. */
interface Prepared {
  readonly recovery: Recovery;
}

/**
 * One session's replay state. Each Map is made when its first entry comes and dropped
 * (`null`) when its last goes: an idle session that subscribed once keeps at most its
 * floor, not three Maps (about 180 bytes each, empty or not).
 */
export interface ReplayState {
  /** By channel; `null` while the history fetch of the channel's subscribe is in flight. */
  prepared: Map<string, Prepared | null> | null;
  /** Channels whose live deliveries are held back (while what was missed is fetched). */
  holding: Map<string, Publication[]> | null;
  /**
   * Channels recovered up to a position, until a live message after it passes: a live one
   * at or before it is a late copy of a recovered one. At most one entry per channel the
   * session subscribed to; removed on unsubscribe.
   */
  floors: Map<string, StreamPosition> | null;
  /** Channels held (being recovered): the position their subscribe recovers from, if it gave one. */
  from: Map<string, StreamPosition> | null;
  /**
   * Whether deliveries carry their positions (`ext.replay`): the session negotiated replay.
   * A session adopted from a draining node without it recovers through this hook too
   * (`recoverFor`), its messages unchanged.
   */
  readonly positions: boolean;
}

export class ReplayExtension implements Extension {
  readonly name = 'replay';
  readonly stage = 'protocol';

  constructor(private readonly history: History) {}

  outgoing(reply: Reply, request: Message, session: ExtensionSession | null): void {
    if (session === null || reply.successful !== true) return;
    if (request.channel === META_HANDSHAKE) {
      if (request.ext?.[EXT_REPLAY] !== true) return;
      this.install(session, true);
      reply.ext = { ...reply.ext, [EXT_REPLAY]: true };
      return;
    }
    if (request.channel !== META_SUBSCRIBE) return;
    const prepared = this.stateOf(session)?.prepared;
    if (prepared === undefined || prepared === null) return;
    const names = typeof request.subscription === 'string' ? [request.subscription] : request.subscription;
    if (!Array.isArray(names)) return;
    const info: Record<string, unknown> = {};
    for (const name of names) {
      const p = prepared.get(String(name));
      if (p !== undefined && p !== null)
        info[String(name)] = { recovered: p.recovery.recovered, ...p.recovery.position };
    }
    if (Object.keys(info).length > 0) reply.ext = { ...reply.ext, [EXT_REPLAY]: info };
  }

  private install(session: ExtensionSession, positions: boolean): void {
    const state: ReplayState = { prepared: null, holding: null, floors: null, from: null, positions };
    session.extensionState.set(this, state);
    session.addEnqueueHook(this);
  }

  /** Whether `session` negotiated replay, for a drain handing it over. */
  handOver(session: ExtensionSession): unknown {
    return this.stateOf(session)?.positions === true ? true : undefined;
  }

  adopt(session: ExtensionSession, negotiated: unknown): void {
    if (negotiated === true) this.install(session, true);
  }

  /**
   * `session` was adopted from a draining node and recovers what it missed meanwhile through
   * its resubscriptions (`ext.replay` positions in them), as a resubscribing client would:
   * one that did not negotiate replay gets the same holding and floors, without positions.
   */
  recoverFor(session: ExtensionSession): void {
    if (this.stateOf(session) === undefined) this.install(session, false);
  }

  /** Positions every delivery; takes those on a held channel; drops late copies of recovered ones. */
  beforeEnqueue(session: ExtensionSession, delivery: PublicationDelivery): string | null | undefined {
    const state = session.extensionState.get(this) as ReplayState;
    const publication = delivery.publication;
    const held = state.holding?.get(publication.channel);
    if (held !== undefined) {
      held.push(publication);
      return null;
    }
    if (publication.position === null) return undefined;
    const floors = state.floors;
    if (floors !== null) {
      if (belowFloor(floors, publication.channel, publication.position)) return null;
      if (floors.size === 0) state.floors = null;
    }
    return state.positions ? delivery.once(this, withPosition) : undefined;
  }

  beforeSubscribe(session: ExtensionSession, channel: string, message?: Message): void {
    const state = this.stateOf(session);
    if (state === undefined) return;
    state.prepared ??= new Map();
    state.prepared.set(channel, null);
    const since = positionIn(message?.ext?.[EXT_REPLAY], channel);
    if (since !== null) {
      state.from ??= new Map();
      state.from.set(channel, since);
    }
    // Hold live messages on the channel until what was missed is queued ahead of them. It
    // starts before the session can receive any: on a node that is the channel's first
    // subscriber, a publication may arrive as soon as the engine confirms its interest,
    // before `subscribing` runs, and would otherwise go out ahead of older recovered ones.
    state.holding ??= new Map();
    if (!state.holding.has(channel)) state.holding.set(channel, []);
  }

  subscribing(
    session: ExtensionSession,
    channel: string,
    message: Message,
  ): Promise<string | undefined> | undefined {
    const state = this.stateOf(session);
    if (state === undefined) return undefined;
    const since = positionIn(message.ext?.[EXT_REPLAY], channel);
    this.beforeSubscribe(session, channel, message);
    const fetch: Promise<Recovery> =
      since === null
        ? this.history.latest(channel).then((position) => ({ recovered: true, publications: [], position }))
        : this.history.since(channel, since);
    return fetch.then(
      (recovery) => {
        state.prepared ??= new Map();
        state.prepared.set(channel, { recovery });
        return undefined;
      },
      () => {
        // The engine could not be read (Redis away): the subscribe fails as any engine call
        // does, with an error the client may retry, not as an internal error.
        forget(state, 'prepared', channel);
        forget(state, 'holding', channel);
        forget(state, 'from', channel);
        return ENGINE_UNAVAILABLE;
      },
    );
  }

  subscribed(session: ExtensionSession, channel: string): void {
    const state = this.stateOf(session);
    if (state === undefined) return;
    const p = state.prepared?.get(channel);
    // The same subscribe again on this session (its first reply was lost, the client sent
    // it anew) while the first one's history is still being fetched: that one releases
    // the held messages after the recovered ones; releasing them now would put live
    // messages ahead of older recovered ones, which the client drops as duplicates.
    if (p === null) return;
    const held = state.holding?.get(channel);
    forget(state, 'prepared', channel);
    forget(state, 'holding', channel);
    forget(state, 'from', channel);
    let last: StreamPosition | null = null;
    if (p?.recovery.recovered === true) {
      for (const pub of p.recovery.publications) deliver(session, pub, state.positions);
      last = p.recovery.position;
    }
    for (const pub of held ?? []) {
      // Already sent from history (same epoch, not after the recovered position): a duplicate.
      const pos = pub.position;
      if (last !== null && pos !== null && pos.epoch === last.epoch && pos.offset <= last.offset) continue;
      deliver(session, pub, state.positions);
    }
    if (last !== null) {
      state.floors ??= new Map();
      state.floors.set(channel, last);
    } else forget(state, 'floors', channel);
  }

  /**
   * The node may have lost messages on `subscription` (a channel or pattern the session
   * follows) and could not recover them (`EngineNode.missed`): a session that negotiated
   * replay is told, in order among its deliveries, by a gap notice (`GAP_CHANNEL`); its
   * client reports a gap as it does for a resubscribe history could not cover. Others
   * have no way to hear it. Returns whether the session was told.
   */
  gap(session: ExtensionSession, subscription: string): boolean {
    if (this.stateOf(session)?.positions !== true) return false;
    const ext = JSON.stringify({ [EXT_REPLAY]: { [subscription]: { recovered: false } } });
    session.enqueue(`{"channel":${JSON.stringify(GAP_CHANNEL)},"ext":${ext}}`);
    return true;
  }

  /** The session left `channel` (or its subscribe was undone): nothing more is held for it. */
  unsubscribed(session: ExtensionSession, channel: string): void {
    const state = this.stateOf(session);
    if (state === undefined) return;
    forget(state, 'holding', channel);
    forget(state, 'floors', channel);
    forget(state, 'from', channel);
  }

  /**
   * Where `session` stands on `channel` while it is being recovered (its live messages held,
   * not queued): the position its subscribe recovers from, or, without one, the channel's
   * position when it subscribed; `null` when not known yet. `undefined` when not being
   * recovered: everything delivered on it reached the session's queue. A drain handing the
   * session over records this, not the node's last position, so the held ones are not lost.
   */
  recoveringFrom(session: ExtensionSession, channel: string): StreamPosition | null | undefined {
    const state = this.stateOf(session);
    if (state?.holding?.has(channel) !== true) return undefined;
    return state.from?.get(channel) ?? state.prepared?.get(channel)?.recovery.position ?? null;
  }

  private stateOf(session: ExtensionSession): ReplayState | undefined {
    // Only sessions that negotiated replay pass through its hook; the others' lazy map stays uncreated.
    if (session.enqueueHooks?.includes(this) !== true) return undefined;
    return session.extensionState.get(this) as ReplayState | undefined;
  }
}

/** The message with `ext.replay` holding its position, built from the serialized payload. */
export function withPosition(publication: Publication): string {
  const p = publication.position as NonNullable<Publication['position']>;
  const ext = `"ext":{"${EXT_REPLAY}":{"offset":${p.offset},"epoch":${JSON.stringify(p.epoch)}}}`;
  // The payload is `{"channel":…,"data":…}`: the ext goes in before its closing brace;
  // a traced one already ends with an ext (`Publication.trace`): the position joins it.
  if (publication.trace !== undefined)
    return `${publication.payload.slice(0, -2)},${ext.slice('"ext":{'.length)}}`;
  return `${publication.payload.slice(0, -1)},${ext}}`;
}

/**
 * Whether a live message on `channel` at `at` is at or before the channel's floor (a late
 * copy of a recovered message). The first one past it (or in another epoch) lifts the floor.
 */
export function belowFloor(
  floors: Map<string, StreamPosition>,
  channel: string,
  at: StreamPosition,
): boolean {
  const floor = floors.get(channel);
  if (floor === undefined) return false;
  if (floor.epoch === at.epoch && at.offset <= floor.offset) return true;
  floors.delete(channel);
  return false;
}

/** Removes `channel` from one of the state's Maps, and the Map once it is empty. */
function forget(state: ReplayState, map: 'prepared' | 'holding' | 'floors' | 'from', channel: string): void {
  const m = state[map];
  if (m === null) return;
  m.delete(channel);
  if (m.size === 0) state[map] = null;
}

function deliver(session: ExtensionSession, pub: Publication, positions: boolean): void {
  session.enqueue(pub.position === null || !positions ? pub.payload : withPosition(pub));
}

/** The position a subscribe's `ext.replay` gives for `channel`, or `null`. */
function positionIn(ext: unknown, channel: string): StreamPosition | null {
  if (typeof ext !== 'object' || ext === null) return null;
  const p = (ext as Record<string, unknown>)[channel];
  if (typeof p !== 'object' || p === null) return null;
  const { offset, epoch } = p as Record<string, unknown>;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || typeof epoch !== 'string')
    return null;
  return { offset, epoch };
}
