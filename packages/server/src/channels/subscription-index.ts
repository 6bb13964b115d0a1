/**
 * Who subscribes to what. Plain channels and wildcard patterns are keys of one Map; a
 * publish looks up the few names `expandChannel` gives for its channel (the channel, its
 * `/*`, its `/**` at each depth), so its cost is proportional to the subscribers reached,
 * never to the number of sessions. Subscribe and unsubscribe are O(1).
 */
import { expandChannel } from '@bayou/protocol';
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

  /**
   * Queues `json` once for every session subscribed to `channel` or to a pattern matching
   * it; returns how many sessions it reached.
   */
  deliver(channel: string, json: string): number {
    const stamp = ++this.stamp;
    let reached = 0;
    const names = expandChannel(channel);
    for (let i = 0; i < names.length; i++) {
      const set = this.byName.get(names[i] as string);
      if (set === undefined) continue;
      for (const session of set) {
        if (session.lastDelivery === stamp) continue;
        session.lastDelivery = stamp;
        session.enqueue(json);
        reached++;
      }
    }
    return reached;
  }
}
