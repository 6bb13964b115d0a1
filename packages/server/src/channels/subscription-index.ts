/**
 * Who subscribes to what. Plain channels and wildcard patterns are keys of one Map; a
 * publish looks up the few names `expandChannel` gives for its channel (the channel, its
 * `/*`, its `/**` at each depth), so its cost is proportional to the subscribers reached,
 * never to the number of sessions. Subscribe and unsubscribe are O(1).
 */
import { expandChannel } from '@bayou/protocol';
import type { Publication } from '../engine/engine.js';
import type { PublicationDelivery, Session } from '../session/session.js';

const NONE: ReadonlySet<Session> = new Set();

/**
 * The sessions subscribed to one name, and the name itself: each session keeps this one
 * string among its subscriptions, not the copy its subscribe message was parsed into.
 */
class Subscribers extends Set<Session> {
  constructor(readonly name: string) {
    super();
  }
}

export class SubscriptionIndex {
  private readonly byName = new Map<string, Subscribers>();
  private stamp = 0;
  /** Counts names left without subscribers: a reader that kept names may recheck only when it moved. */
  emptied = 0;

  /** Returns `true` when this is the first subscriber of `name`. */
  add(name: string, session: Session): boolean {
    let set = this.byName.get(name);
    const first = set === undefined;
    if (set === undefined) {
      set = new Subscribers(name);
      this.byName.set(name, set);
    }
    set.add(session);
    session.subscriptions.add(set.name);
    return first;
  }

  /** Returns `true` when `session` was the last subscriber of `name`. */
  remove(name: string, session: Session): boolean {
    session.subscriptions.delete(name);
    const set = this.byName.get(name);
    if (set === undefined || !set.delete(session)) return false;
    if (set.size > 0) return false;
    this.byName.delete(name);
    this.emptied++;
    return true;
  }

  /** The sessions subscribed to exactly `name` (a channel or a pattern). */
  sessionsOf(name: string): ReadonlySet<Session> {
    return this.byName.get(name) ?? NONE;
  }

  subscriberCount(name: string): number {
    return this.byName.get(name)?.size ?? 0;
  }

  /** Channels and wildcard names held here. */
  get size(): number {
    return this.byName.size;
  }

  /** Every name held here with its subscriber count. */
  *counts(): IterableIterator<[string, number]> {
    for (const [name, set] of this.byName) yield [name, set.size];
  }

  /**
   * Queues a publication once for every session subscribed to its channel or to a pattern
   * matching it; returns how many sessions it reached. The same string goes to every
   * session without enqueue hooks; a session with hooks (replay's positions, its held
   * channels) gets what they make of one `PublicationDelivery` shared by all of them.
   */
  deliver(publication: Publication): number {
    const stamp = ++this.stamp;
    let reached = 0;
    const json = publication.payload;
    let delivery: OutgoingPublication | null = null;
    const names = expandChannel(publication.channel);
    for (let i = 0; i < names.length; i++) {
      const set = this.byName.get(names[i] as string);
      if (set === undefined) continue;
      for (const session of set) {
        if (session.lastDelivery === stamp) continue;
        session.lastDelivery = stamp;
        if (session.enqueueHooks === null) {
          session.enqueue(json);
          reached++;
          continue;
        }
        delivery ??= new OutgoingPublication(publication);
        if (session.enqueueHooked(delivery)) reached++;
      }
    }
    return reached;
  }
}

/** A publication on its way, with the variants extensions built of it (once each). */
class OutgoingPublication implements PublicationDelivery {
  readonly json: string;
  // One variant is the usual case (replay's positions): kept in two fields, a Map beyond.
  private firstKey: object | null = null;
  private firstText = '';
  private more: Map<object, string> | null = null;

  constructor(readonly publication: Publication) {
    this.json = publication.payload;
  }

  once(key: object, build: (publication: Publication) => string): string {
    if (this.firstKey === key) return this.firstText;
    if (this.firstKey === null) {
      this.firstKey = key;
      this.firstText = build(this.publication);
      return this.firstText;
    }
    this.more ??= new Map();
    let text = this.more.get(key);
    if (text === undefined) {
      text = build(this.publication);
      this.more.set(key, text);
    }
    return text;
  }
}
