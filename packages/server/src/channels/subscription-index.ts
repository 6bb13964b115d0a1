/**
 * Who subscribes to what. Plain channels and wildcard patterns are keys of one Map; a
 * publish looks up the few names `expandChannel` gives for its channel (the channel, its
 * `/*`, its `/**` at each depth), so its cost is proportional to the subscribers reached,
 * never to the number of sessions. Subscribe and unsubscribe are O(1).
 */
import { EXT_REPLAY, expandChannel } from '@bayou/protocol';
import type { Publication } from '../engine/engine.js';
import type { Session } from '../session/session.js';

export class SubscriptionIndex {
  private readonly byName = new Map<string, Set<Session>>();
  private stamp = 0;

  /** Returns `true` when this is the first subscriber of `name`. */
  add(name: string, session: Session): boolean {
    let set = this.byName.get(name);
    const first = set === undefined;
    if (set === undefined) {
      set = new Set();
      this.byName.set(name, set);
    }
    set.add(session);
    session.subscriptions.add(name);
    return first;
  }

  /** Returns `true` when `session` was the last subscriber of `name`. */
  remove(name: string, session: Session): boolean {
    session.subscriptions.delete(name);
    const set = this.byName.get(name);
    if (set === undefined || !set.delete(session)) return false;
    if (set.size > 0) return false;
    this.byName.delete(name);
    return true;
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
   * session: the plain message, or — built once, for sessions that asked for positions —
   * the message with its position in `ext`.
   */
  deliver(publication: Publication): number {
    const stamp = ++this.stamp;
    let reached = 0;
    const json = publication.payload;
    let positioned: string | null = publication.position === null ? json : null;
    const names = expandChannel(publication.channel);
    for (let i = 0; i < names.length; i++) {
      const set = this.byName.get(names[i] as string);
      if (set === undefined) continue;
      for (const session of set) {
        if (session.lastDelivery === stamp) continue;
        session.lastDelivery = stamp;
        const held = session.holding?.get(publication.channel);
        if (held !== undefined) {
          held.push(publication);
          continue;
        }
        if (session.wantsPositions) {
          positioned ??= withPosition(publication);
          session.enqueue(positioned);
        } else session.enqueue(json);
        reached++;
      }
    }
    return reached;
  }
}

/** The message with `ext.replay` holding its position, built from the serialized payload. */
export function withPosition(publication: Publication): string {
  const p = publication.position as NonNullable<Publication['position']>;
  const ext = `"ext":{"${EXT_REPLAY}":{"offset":${p.offset},"epoch":${JSON.stringify(p.epoch)}}}`;
  // The payload is `{"channel":…,"data":…}`: the ext goes in before its closing brace.
  return `${publication.payload.slice(0, -1)},${ext}}`;
}
