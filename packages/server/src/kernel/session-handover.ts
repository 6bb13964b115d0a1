/**
 * Sessions that survive their node's drain (issue #35). A draining node hands each session
 * over through the engine (`Engine.handover`): its record — subscriptions, what was queued,
 * the extensions' state (ack's batch number and unacknowledged batches, replay), the browser
 * binding, auth, the handshake's `ext` — is written for `maxInterval`, then its held connect
 * is answered with `reconnect: retry` (no handshake) and its WebSocket closed. The node a
 * client reconnects to with that clientId claims the record (one atomic step: two nodes
 * cannot both adopt it), rebuilds the session under the same clientId, resubscribes it and
 * serves it; other nodes forward its long-polls to the adopter as to any owner.
 *
 * Nothing published meanwhile is lost: the record keeps, for each concrete channel, the
 * position of the last message this node queued to the session (every publication on a
 * channel reaches every subscriber of a node, in order), and the adopter resubscribes
 * through the replay extension from that position — history fills the gap, live messages
 * are held meanwhile, late copies dropped (`ReplayExtension.recoverFor`).
 */
import {
  EXT_REPLAY,
  expandChannel,
  META_SUBSCRIBE,
  type Message,
  matches,
  parseChannel,
} from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { ExtensionPipeline } from '../bayeux/extensions.js';
import type { Engine, MaybePromise, Publication, SessionHandover, StreamPosition } from '../engine/engine.js';
import type { ReplayExtension } from '../extensions/replay-extension.js';
import type { CarrierKind } from '../session/carrier.js';
import type { Session } from '../session/session.js';
import { ownerOf, type SessionRegistry } from '../session/session-registry.js';
import type { Connects } from './connects.js';
import { recovery, type SessionRecord } from './session-record.js';

/** How long a node is named the adopter of a session (deleted sooner when the session ends there). */
const ADOPTER_TTL_MS = 24 * 3600_000;
/** Channels whose last position is kept before those without subscribers here are dropped. */
const MAX_TRACKED_CHANNELS = 10_000;
/** Most channels a session's wildcard subscriptions recover from at an adoption. */
export const MAX_PATTERN_CHANNELS = 1000;

export interface HandoverParts {
  readonly engine: Engine;
  readonly log: FastifyBaseLogger;
  readonly maxInterval: number;
  readonly registry: SessionRegistry;
  readonly connects: Pick<Connects, 'complete'>;
  readonly outbound: { flush(session: Session): void };
  /** Ends a session handed over (`SessionEnds.removeSession` with reason `handover`). */
  readonly remove: (session: Session) => void;
  /** The kernel's subscribe (presence, records), its follow-up once the reply would be out, unsubscribe. */
  readonly channels: {
    subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined>;
    subscribed(session: Session, name: string): void;
    unsubscribe(session: Session, name: string): void;
  };
  readonly extensions: ExtensionPipeline;
  readonly replay: ReplayExtension;
  /** Subscribers of a channel on this node. */
  readonly index: {
    subscriberCount(channel: string): number;
    /** Grows whenever a name is left without subscribers. */
    readonly emptied: number;
  };
  /** The other nodes: whether one is alive, and asking one to hand a session over now. */
  readonly cluster: {
    isAlive(nodeId: string): MaybePromise<boolean>;
    takeOver(nodeId: string, clientId: string): Promise<unknown>;
    /** Sends a direct message on towards its session (`ClusterLink.sendDirect`). */
    sendDirect(clientId: string, message: string): MaybePromise<boolean>;
  };
}

/** Where a request for a session not on this node goes: here (adopted, or unknown) or to its adopter. */
export type Located = 'here' | { readonly node: string };

export class SessionHandovers {
  /**
   * Sessions this node handed over, and until when a request for one is told to go elsewhere
   * (`maxInterval`: its client came back well before, or its record expired), oldest first:
   * forgotten as newer ones come in (a node that takes sessions over lives on).
   */
  private readonly moved = new Map<string, number>();
  /**
   * Set once this node drains: from then on each clientId it hands over is remembered until
   * it closes, not for the record's TTL. A drain spread over 20 s outlives that TTL (10–11 s
   * by default), and a long-poll another node forwarded here by its clientId's name after it
   * ran out was answered here, `402 session_unknown`, though the session lived on its
   * adopter: 171–231 clients handshook again in each 10,000-client drain with a 20 s spread.
   */
  private drainingSince: number | null = null;
  /** Sessions this node adopted: their adopter key is deleted when they end here. */
  private readonly adopted = new Set<string>();
  /** Claims in flight, so two requests of one session claim once. */
  private readonly claiming = new Map<string, Promise<Located>>();
  /** The last position this node delivered per channel (channels with subscribers here). */
  private readonly last = new Map<string, StreamPosition>();
  private readonly store: SessionHandover;

  constructor(
    private readonly p: HandoverParts,
    readonly nodeId: string,
  ) {
    this.store = p.engine.handover as SessionHandover;
  }

  /** A handover engine shared by several nodes, or `null` (one node: nothing to hand over to). */
  static create(p: HandoverParts, nodeId: string): SessionHandovers | null {
    if (p.engine.handover === undefined || !p.engine.capabilities.multiNode) return null;
    return new SessionHandovers(p, nodeId);
  }

  /**
   * `index`, keeping each channel's last position as publications pass to its subscribers
   * (of the channel, or of a wildcard matching it).
   */
  tracking(index: { deliver(publication: Publication): number }): {
    deliver(publication: Publication): number;
  } {
    return {
      deliver: (publication) => {
        const reached = index.deliver(publication);
        this.seen(publication, reached);
        return reached;
      },
    };
  }

  /**
   * A publication reached `reached` sessions here: its channel's last position, when a
   * session here follows the channel (none reached when each held it, recovering: those
   * get it later, so it counts).
   */
  seen(publication: Publication, reached: number): void {
    const position = publication.position;
    if (position === null || (reached === 0 && !this.followed(publication.channel))) return;
    this.last.set(publication.channel, position);
    if (this.last.size <= this.pruneAbove && this.p.index.emptied === this.prunedAt) return;
    if (this.last.size <= MAX_TRACKED_CHANNELS) return;
    // A pass over every kept channel, so only when it can drop something: a channel here lost
    // its last subscriber since the previous pass, or the kept ones doubled since (all still
    // followed: more than MAX_TRACKED_CHANNELS of them must not cost a pass per publication).
    for (const channel of this.last.keys()) if (!this.followed(channel)) this.last.delete(channel);
    this.prunedAt = this.p.index.emptied;
    this.pruneAbove = Math.max(MAX_TRACKED_CHANNELS, 2 * this.last.size);
  }

  /** `index.emptied` at the last pass over the kept channels. */
  private prunedAt = -1;
  /** Past this many kept channels a pass is made even if no channel here was emptied. */
  private pruneAbove = MAX_TRACKED_CHANNELS;

  /** Whether a session here subscribes to `channel` or to a wildcard matching it. */
  private followed(channel: string): boolean {
    for (const name of expandChannel(channel)) if (this.p.index.subscriberCount(name) > 0) return true;
    return false;
  }

  /** The node drains: what it hands over from now on is remembered until it closes (`drainingSince`). */
  draining(now = Date.now()): void {
    this.drainingSince ??= now;
  }

  /** Whether this node handed the session over (a request for it goes to its adopter). */
  handedOver(clientId: unknown, now = Date.now()): boolean {
    if (typeof clientId !== 'string') return false;
    const until = this.moved.get(clientId);
    return until !== undefined && until > now;
  }

  /** How many handed-over clientIds are remembered (for tests of their eviction). */
  get remembered(): number {
    return this.moved.size;
  }

  /** How many channels' last positions are kept (for tests of their eviction). */
  get tracked(): number {
    return this.last.size;
  }

  /** Remembers `clientId` as handed over for `ttl` ms; those past theirs go, oldest first. */
  private remember(clientId: string, now: number, ttl: number): void {
    for (const [id, until] of this.moved) {
      if (until > now) break;
      this.moved.delete(id);
    }
    this.moved.delete(clientId);
    this.moved.set(clientId, now + ttl);
  }

  /**
   * Hands `session` over: its record written, its deliveries here stopped, its held connect
   * answered `reconnect: retry` after `interval` ms, its WebSocket closed. `false` when the
   * record could not be written: the caller ends the session as before (handshake advice).
   */
  async handOver(session: Session, interval: number): Promise<boolean> {
    if (session.state === 'removed') return true;
    const record = this.snapshot(session);
    for (const name of [...session.subscriptions]) this.p.channels.unsubscribe(session, name);
    // Its client is told to come back after `interval` (a paced drain spreads them over
    // `drainSpread`), then has `maxInterval` as for any reconnect: the record waits that long.
    const ttl = this.p.maxInterval + interval;
    try {
      await this.store.put(session.id, JSON.stringify(record), ttl);
    } catch (err) {
      this.p.log.warn({ err, clientId: session.id }, 'session handover failed; ending it');
      session.requeue(record.queue);
      return false;
    }
    // From now on a request for it is told to go elsewhere (until now this node still held it:
    // a connect that came meanwhile is answered below, `retry`, as the held one).
    this.remember(session.id, Date.now(), this.drainingSince === null ? ttl : Number.POSITIVE_INFINITY);
    // Direct messages queued while the record was written go with it (kept in its mail).
    for (const message of session.drain()) this.sendOn(session.id, message);
    if (gone(session)) return true;
    const carrier = session.carrier;
    if (session.held !== null) {
      this.p.connects.complete(session, { reconnect: 'retry', interval }, false);
      if (carrier !== null) this.p.outbound.flush(session);
    }
    if (!gone(session)) this.p.remove(session);
    carrier?.end(1001, 'server shutting down');
    return true;
  }

  /**
   * A request names `clientId`, not a session of this node: claims its handed-over record
   * (the session is then adopted here), or finds the node that adopted it. `here` when it
   * was adopted here or is unknown anywhere (the kernel then answers as for any unknown one).
   */
  locate(clientId: unknown, kind: CarrierKind): Promise<Located> | Located {
    if (typeof clientId !== 'string' || ownerOf(clientId) === null) return 'here';
    if (this.handedOver(clientId) || this.p.registry.get(clientId) !== undefined) return 'here';
    let claim = this.claiming.get(clientId);
    if (claim === undefined) {
      claim = this.claim(clientId, kind).finally(() => this.claiming.delete(clientId));
      this.claiming.set(clientId, claim);
    }
    return claim;
  }

  /** A direct message for a session not here: into its mail, and where to ring for it (`SessionHandover.route`). */
  route(clientId: string, message: string): Promise<'kept' | { owner: string } | null> {
    return this.store.route(clientId, message, this.p.maxInterval);
  }

  /** Takes the mail of a session of this node. */
  takeMail(clientId: string): Promise<string[]> {
    return this.store.takeMail(clientId);
  }

  private sendOn(clientId: string, message: string): void {
    const sent = this.p.cluster.sendDirect(clientId, message);
    if (sent instanceof Promise)
      sent.catch((err: unknown) =>
        this.p.log.warn({ err, clientId }, 'a direct message for a session handed over was lost'),
      );
  }

  /** The claim of `clientId` under way here, if any (the session is adopted once it settles). */
  adopting(clientId: string): Promise<unknown> | undefined {
    return this.claiming.get(clientId);
  }

  /** A session ended here: when this node had adopted it, it is no one's any more. */
  ended(session: Session): void {
    if (!this.adopted.delete(session.id)) return;
    void this.store.release(session.id).catch(() => undefined);
  }

  private async claim(clientId: string, kind: CarrierKind): Promise<Located> {
    let found: Awaited<ReturnType<SessionHandover['claim']>>;
    try {
      found = await this.store.claim(clientId, ADOPTER_TTL_MS);
      // A WebSocket is served where it is open, not forwarded: a session its live owner still
      // holds (Faye opens its WebSocket after a handshake over HTTP, which a balancer without
      // affinity sends elsewhere) is taken over, as a drain would hand it over.
      const owner = ownerOf(clientId) as string;
      if (found === null && forwardless(kind) && (await this.p.cluster.isAlive(owner))) {
        if ((await this.p.cluster.takeOver(owner, clientId)) === true)
          found = await this.store.claim(clientId, ADOPTER_TTL_MS);
      }
    } catch (err) {
      this.p.log.warn({ err, clientId }, 'looking up a handed-over session failed');
      return 'here';
    }
    if (found === null) return 'here';
    if ('owner' in found) return found.owner === this.nodeId ? 'here' : { node: found.owner };
    await this.adopt(JSON.parse(found.record) as SessionRecord, kind, found.mail);
    return 'here';
  }

  private snapshot(session: Session): SessionRecord {
    const positions: Record<string, StreamPosition> = {};
    const patterns: string[] = [];
    for (const name of session.subscriptions) {
      if (parseChannel(name)?.wildcard !== null) patterns.push(name);
      const position = this.last.get(name);
      if (position !== undefined) positions[name] = position;
    }
    if (patterns.length > 0) this.matching(patterns, positions);
    // Channels still being recovered here (adopted, or resubscribed, moments ago): their live
    // messages are held, not queued, so the session stands where its recovery started.
    for (const channel of Object.keys(positions)) {
      const from = this.p.replay.recoveringFrom(session, channel);
      if (from === null) delete positions[channel];
      else if (from !== undefined) positions[channel] = from;
    }
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(JSON.stringify(session.data)) as Record<string, unknown>;
    } catch {
      // Application data that is not JSON stays behind.
    }
    return {
      v: 1,
      id: session.id,
      browserId: session.browserId,
      auth: session.auth === null ? null : { ...session.auth },
      handshakeExt: session.handshakeExt,
      data,
      connected: session.connected,
      mode: session.deliveryMode,
      subscriptions: [...session.subscriptions],
      positions,
      queue: session.drain(),
      ext: this.p.extensions.handOver(session),
    };
  }

  /**
   * The channels `patterns` match that carried messages here, with their last positions
   * (at most `MAX_PATTERN_CHANNELS`): the adopter recovers each from there, since what it
   * delivered through the wildcards was delivered up to there.
   */
  private matching(patterns: readonly string[], positions: Record<string, StreamPosition>): void {
    let room = MAX_PATTERN_CHANNELS;
    for (const [channel, position] of this.last) {
      if (room === 0) return;
      if (channel in positions || !patterns.some((pattern) => matches(pattern, channel))) continue;
      positions[channel] = position;
      room--;
    }
  }

  /** Rebuilds a handed-over session here and resubscribes it from its positions. */
  private async adopt(record: SessionRecord, kind: CarrierKind, mail: readonly string[]): Promise<void> {
    const session = this.p.registry.adopt(record.id, kind);
    this.adopted.add(record.id);
    session.browserId = record.browserId;
    session.handshakeExt = record.handshakeExt;
    session.setAuth(record.auth);
    Object.assign(session.data, record.data);
    session.connected = record.connected;
    session.requestDelivery(record.mode);
    this.p.extensions.adopt(session, record.ext);
    this.p.replay.recoverFor(session);
    session.requeue(record.queue.concat(mail));
    // Channels it followed through wildcards only: their live messages are held from now on,
    // so none overtakes what is recovered for them once the wildcards are subscribed again.
    const subscribed = new Set(record.subscriptions);
    const viaPatterns = Object.keys(record.positions).filter((channel) => !subscribed.has(channel));
    for (const channel of viaPatterns)
      this.p.replay.beforeSubscribe(session, channel, recovery(session, channel, record.positions[channel]));
    await Promise.all(
      record.subscriptions.map((name) => this.resubscribe(session, name, record.positions[name])),
    );
    await Promise.all(
      viaPatterns.map((channel) =>
        this.recover(session, channel, record.positions[channel] as StreamPosition),
      ),
    );
  }

  /**
   * What was published on `channel` since `position`, for a session that follows it through
   * a wildcard (the wildcard subscribed again here): recovered from history as a
   * resubscription would be, then the live messages held meanwhile, duplicates dropped.
   */
  private async recover(session: Session, channel: string, position: StreamPosition): Promise<void> {
    const replay = this.p.replay;
    const error = await replay.subscribing(session, channel, recovery(session, channel, position));
    if (error !== undefined)
      this.p.log.warn(
        { clientId: session.id, channel, error },
        'an adopted session could not recover a channel',
      );
    // Recovered (or not): what was held is released either way.
    if (!gone(session)) replay.subscribed(session, channel);
  }

  private async resubscribe(
    session: Session,
    name: string,
    position: StreamPosition | undefined,
  ): Promise<void> {
    const message: Message = { channel: META_SUBSCRIBE, clientId: session.id, subscription: name };
    if (position !== undefined && parseChannel(name)?.wildcard === null)
      message.ext = { [EXT_REPLAY]: { [name]: position } };
    const error = await this.p.channels.subscribe(session, name, message);
    if (error !== undefined) {
      this.p.log.warn(
        { clientId: session.id, channel: name, error },
        'an adopted session could not resubscribe',
      );
      return;
    }
    this.p.channels.subscribed(session, name);
  }
}

/** Whether `session` ended (read again after an await: the narrowing of before does not hold). */
function gone(session: Session): boolean {
  return session.state === 'removed';
}

/** Whether batches on a carrier of `kind` cannot be forwarded to another node (a WebSocket: it pushes both ways, on its own socket). */
function forwardless(kind: CarrierKind): boolean {
  return kind.pushes && !kind.unidirectional && !kind.keepsSession;
}
