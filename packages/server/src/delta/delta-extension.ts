/**
 * Deltas on plain channels, asked for per subscription (`ext.delta`, see `@bayou/protocol`'s
 * `EXT_DELTA`). After a first whole message, a subscriber gets each message of the channel
 * as a JSON Merge Patch against the previous one it was sent there, named by both ids;
 * a message goes whole instead when there is no base (the first one, a channel without
 * history positions, another epoch, a message replay held back or dropped) or when the
 * delta is not smaller. The client checks the base: one that is not its last message is
 * never applied (it subscribes again, and the next message comes whole).
 *
 * Cost: a publication is parsed and made whole once, and each delta is computed once per
 * base (`PreparedPublication`): subscribers that were sent the same previous message share
 * one text. Per delivery, one lookup by identity among the channel's delta subscribers.
 * Per delta subscription, an entry in its channel's map (its last message, shared with
 * the other subscribers) and the channel's name in the session's set, both dropped on
 * unsubscribe and with the session; a channel's map goes with its last delta subscriber.
 */
import { DELTA_FORMAT, EXT_DELTA, EXT_REPLAY, META_SUBSCRIBE, type Message } from '@bayou/protocol';
import type { Extension, Reply } from '../bayeux/extensions.js';
import type { Publication } from '../engine/engine.js';
import { withPosition } from '../extensions/replay-extension.js';
import type { EnqueueHook, ExtensionSession, PublicationDelivery } from '../session/session.js';
import { mergePatch } from './merge-patch.js';

/** A message as a base of later deltas: shared by every subscriber that was sent it. */
interface Base {
  readonly id: string;
  readonly epoch: string;
  readonly data: unknown;
}

/** By delta subscriber of one channel: the last message sent it there, `null` when the next one must go whole. */
type Subscribers = Map<ExtensionSession, Base | null>;

/** A session's delta subscriptions (its channels), kept so that its removal forgets them. */
type DeltaChannels = Set<string>;

export class DeltaExtension implements Extension {
  readonly name = 'delta';
  readonly stage = 'protocol';
  /**
   * By channel, its delta subscribers. Kept by channel, not by session: a publication
   * looks its channel up once, and each subscriber is then found by identity in a map of
   * that channel's few subscribers — a string-keyed map per session, probed once per
   * delivery, cost a cache miss and a string compare each time (the profile's hot spot).
   */
  private readonly channels = new Map<string, Subscribers>();
  /** The publication being delivered, prepared once for all the delta subscribers it reaches. */
  private current: Delivering | null = null;

  /** `replay` positions messages: a session that negotiated it gets them positioned here too. */
  constructor(private readonly replay: EnqueueHook) {}

  /** Channels with delta subscribers here (the test of their eviction). */
  get channelCount(): number {
    return this.channels.size;
  }

  beforeSubscribe(session: ExtensionSession, channel: string, message: Message): void {
    if (message.ext?.[EXT_DELTA] === DELTA_FORMAT) this.restart(session, channel);
    else this.forget(session, channel);
  }

  /** Grants deltas in the reply; a subscribe again (already subscribed) starts afresh too. */
  outgoing(reply: Reply, request: Message, session: ExtensionSession | null): void {
    if (session === null || request.channel !== META_SUBSCRIBE || reply.successful !== true) return;
    if (request.ext?.[EXT_DELTA] !== DELTA_FORMAT) return;
    const names = Array.isArray(request.subscription) ? request.subscription : [request.subscription];
    let granted = false;
    for (const name of names) {
      // Concrete channels only (as `beforeSubscribe` sees them): not wildcards, not records.
      if (typeof name !== 'string' || name.includes('*') || !session.subscriptions.has(name)) continue;
      this.restart(session, name);
      granted = true;
    }
    if (granted) reply.ext = { ...reply.ext, [EXT_DELTA]: DELTA_FORMAT };
  }

  /** The next message on `channel` goes whole, and later ones as deltas. */
  private restart(session: ExtensionSession, channel: string): void {
    let mine = this.stateOf(session);
    if (mine === undefined) {
      mine = new Set();
      session.extensionState.set(this, mine);
      // Ahead of replay's hook: this one asks replay first and wraps what it makes.
      session.addEnqueueHook(this, true);
    }
    mine.add(channel);
    let subscribers = this.channels.get(channel);
    if (subscribers === undefined) {
      subscribers = new Map();
      this.channels.set(channel, subscribers);
      if (this.current?.publication.channel === channel) this.current = null;
    }
    subscribers.set(session, null);
  }

  unsubscribed(session: ExtensionSession, channel: string): void {
    this.forget(session, channel);
  }

  beforeEnqueue(session: ExtensionSession, delivery: PublicationDelivery): string | null | undefined {
    const publication = delivery.publication;
    if (publication.record === true) return undefined;
    let current = this.current;
    if (current === null || current.publication !== publication) {
      current = new Delivering(publication, this.channels.get(publication.channel));
      this.current = current;
    }
    const subscribers = current.subscribers;
    const base = subscribers?.get(session);
    if (subscribers === undefined || base === undefined) return undefined;
    const positioned = session.enqueueHooks?.includes(this.replay) === true;
    // Replay's verdict first (held back, dropped, positioned): its hook must not run twice.
    const replayed = positioned ? this.replay.beforeEnqueue(session, delivery) : undefined;
    if (replayed === null || publication.position === null) {
      subscribers.set(session, null);
      return replayed ?? delivery.json;
    }
    const prepared = current.prepared();
    subscribers.set(session, prepared.base);
    return prepared.text(base, positioned);
  }

  removed(session: ExtensionSession): void {
    const mine = this.stateOf(session);
    if (mine === undefined) return;
    session.extensionState.delete(this);
    for (const channel of mine) this.dropSubscriber(session, channel);
  }

  /**
   * A session's delta channels, `undefined` when it has none. Only a session with delta
   * subscriptions carries this extension's hook: for the others (every subscribe without
   * deltas asks) the session's lazy state map stays uncreated — 184 bytes an idle session.
   */
  private stateOf(session: ExtensionSession): DeltaChannels | undefined {
    if (session.enqueueHooks?.includes(this) !== true) return undefined;
    return session.extensionState.get(this) as DeltaChannels | undefined;
  }

  /** Deltas on `channel` end for `session` (unsubscribed, or subscribed again without them). */
  private forget(session: ExtensionSession, channel: string): void {
    const mine = this.stateOf(session);
    if (mine?.delete(channel) !== true) return;
    this.dropSubscriber(session, channel);
    if (mine.size > 0) return;
    session.extensionState.delete(this);
    session.removeEnqueueHook(this);
  }

  private dropSubscriber(session: ExtensionSession, channel: string): void {
    const subscribers = this.channels.get(channel);
    if (subscribers?.delete(session) !== true || subscribers.size > 0) return;
    this.channels.delete(channel);
    if (this.current?.publication.channel === channel) this.current = null;
  }
}

/** A publication on its way to a channel's delta subscribers; prepared when the first needs it. */
class Delivering {
  private made: PreparedPublication | null = null;

  constructor(
    readonly publication: Publication,
    readonly subscribers: Subscribers | undefined,
  ) {}

  prepared(): PreparedPublication {
    this.made ??= new PreparedPublication(this.publication);
    return this.made;
  }
}

/** A publication made ready for delta subscribers: its base, its whole texts, its deltas by base. */
class PreparedPublication {
  readonly base: Base;
  private readonly message: Message;
  private readonly whole: [string | null, string | null] = [null, null];
  /** By base, then positioned or not: the delta's text, or `null` when it goes whole. */
  private readonly deltas = new Map<Base, [string | null | undefined, string | null | undefined]>();

  constructor(readonly publication: Publication) {
    const position = publication.position as NonNullable<Publication['position']>;
    this.message = JSON.parse(publication.payload) as Message;
    this.base = {
      id: `${position.epoch}:${position.offset}`,
      epoch: position.epoch,
      data: this.message.data,
    };
  }

  /** What a subscriber whose last message was `base` gets. */
  text(base: Base | null, positioned: boolean): string {
    const whole = this.wholeText(positioned);
    if (base === null || base.epoch !== this.base.epoch) return whole;
    let cached = this.deltas.get(base);
    if (cached === undefined) {
      cached = [undefined, undefined];
      this.deltas.set(base, cached);
    }
    const slot = positioned ? 1 : 0;
    if (cached[slot] === undefined) cached[slot] = this.deltaText(base, positioned, whole);
    return cached[slot] ?? whole;
  }

  private wholeText(positioned: boolean): string {
    const slot = positioned ? 1 : 0;
    const ext = `"${EXT_DELTA}":{"id":${JSON.stringify(this.base.id)}}`;
    // Payloads are `{"channel":…,"data":…}`; a positioned one ends `,"ext":{"replay":{…}}}`.
    this.whole[slot] ??= positioned
      ? `${withPosition(this.publication).slice(0, -2)},${ext}}}`
      : this.publication.trace !== undefined
        ? `${this.publication.payload.slice(0, -2)},${ext}}}`
        : `${this.publication.payload.slice(0, -1)},"ext":{${ext}}}`;
    return this.whole[slot];
  }

  /** The delta from `base`, or `null` when there is none or it is not smaller than `whole`. */
  private deltaText(base: Base, positioned: boolean, whole: string): string | null {
    const patch = mergePatch(base.data, this.message.data);
    if (patch === undefined) return null;
    const position = this.publication.position as NonNullable<Publication['position']>;
    const ext: Record<string, unknown> = { ...this.message.ext };
    if (positioned) ext[EXT_REPLAY] = { offset: position.offset, epoch: position.epoch };
    ext[EXT_DELTA] = { id: this.base.id, from: base.id };
    const text = JSON.stringify({ ...this.message, data: patch, ext });
    return text.length < whole.length ? text : null;
  }
}
