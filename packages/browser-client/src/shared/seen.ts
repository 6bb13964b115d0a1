/**
 * What a tab of a shared connection has seen: the last position per hub subscription and
 * concrete channel. Deliveries at or before it are duplicates (a new leader recovers from
 * the earliest position of all tabs); the positions go with the tab's subscribes to a new
 * leader, so it recovers what was published while no hub was subscribed.
 */
import type { Position } from '../recovery.js';

export class Seen {
  private readonly subs = new Map<string, Map<string, Position>>();

  /** Records `p` on `channel` of `sub`; `false` when the tab had it already (a duplicate). */
  fresh(sub: string, channel: string, p: Position): boolean {
    const seen = this.subs.get(sub) ?? new Map<string, Position>();
    this.subs.set(sub, seen);
    const last = seen.get(channel);
    if (last !== undefined && last.epoch === p.epoch && p.offset <= last.offset) return false;
    seen.set(channel, { offset: p.offset, epoch: p.epoch });
    return true;
  }

  /**
   * Where the hub's subscription `sub` started (the channel's latest position when the
   * server answered), unless something arrived since: a channel quiet until a leader
   * change still recovers from there.
   */
  start(sub: string, p: Position): void {
    if (!this.subs.get(sub)?.has(sub)) this.fresh(sub, sub, p);
  }

  positions(sub: string): Record<string, Position> | undefined {
    const seen = this.subs.get(sub);
    return seen === undefined ? undefined : Object.fromEntries(seen);
  }

  forget(sub: string): void {
    this.subs.delete(sub);
  }
}
