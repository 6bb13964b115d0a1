/**
 * Per-channel entries bounded twice, for the engines' history: an entry unused for its
 * time-to-live goes at the next `sweep`, and past `max` entries the least recently used
 * one makes room for a new one. The memory engine indexes its streams with it; the Redis
 * engine the channels whose keys this node wrote.
 *
 * Entries are listed by time-to-live (one list per distinct TTL: the default, each
 * history rule's…), each list in the order of last use and linked through the entries
 * themselves. The front of a list is the next of its entries to expire, so a sweep
 * touches only what it drops, and the least recently used entry of all is the oldest of
 * the few list fronts. (A Map's insertion order would give one such list, but reaching
 * its first entry after many deletions at the front walks every deleted slot: tens of µs
 * per eviction at 100,000 entries.)
 */

export interface Recent<T> {
  readonly key: string;
  /** When it was last used (set by `touch`). */
  lastAt: number;
  /** ms it stays after `lastAt` (set by `touch`). */
  ttlMs: number;
  older: T | null;
  newer: T | null;
}

export type DropReason = 'expired' | 'evicted';

class RecencyList<T extends Recent<T>> {
  oldest: T | null = null;
  private newest: T | null = null;

  append(entry: T): void {
    entry.older = this.newest;
    entry.newer = null;
    if (this.newest !== null) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  unlink(entry: T): void {
    if (entry.older !== null) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer !== null) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = null;
    entry.newer = null;
  }
}

export class RecencyIndex<T extends Recent<T>> {
  private readonly entries = new Map<string, T>();
  /** TTL → its entries, least recently used first. */
  private readonly lists = new Map<number, RecencyList<T>>();
  /** Entries dropped after their TTL and to stay within `max` (running totals). */
  expired = 0;
  evicted = 0;

  constructor(
    private readonly max: number,
    /** Told of every entry dropped, after it left the index. */
    private readonly dropped: (entry: T, why: DropReason) => void,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  /** Evicts the least recently used entry if the index is full. */
  makeRoom(): void {
    if (this.entries.size >= this.max) this.evictOldest();
  }

  /** Adds `entry` (its key absent) as used at its `lastAt`, making room first. */
  add(entry: T): void {
    this.makeRoom();
    this.entries.set(entry.key, entry);
    this.list(entry.ttlMs).append(entry);
  }

  /** Marks `entry` used at `now`, staying `ttlMs` from now. */
  touch(entry: T, ttlMs: number, now: number): void {
    this.list(entry.ttlMs).unlink(entry);
    entry.lastAt = now;
    entry.ttlMs = ttlMs;
    this.list(ttlMs).append(entry);
  }

  /** Drops the entries unused for their TTL, at most `budget` of them (the rest next time). */
  sweep(now: number, budget: number): number {
    let dropped = 0;
    for (const [ttlMs, list] of this.lists) {
      let entry = list.oldest;
      while (entry !== null && now - entry.lastAt >= ttlMs && dropped < budget) {
        const next = entry.newer;
        this.drop(entry, list, 'expired');
        dropped++;
        entry = next;
      }
    }
    this.expired += dropped;
    return dropped;
  }

  private evictOldest(): void {
    let victim: T | null = null;
    let from: RecencyList<T> | null = null;
    for (const list of this.lists.values()) {
      const e = list.oldest;
      if (e !== null && (victim === null || e.lastAt < victim.lastAt)) {
        victim = e;
        from = list;
      }
    }
    if (victim === null || from === null) return;
    this.evicted++;
    this.drop(victim, from, 'evicted');
  }

  private drop(entry: T, list: RecencyList<T>, why: DropReason): void {
    this.entries.delete(entry.key);
    list.unlink(entry);
    this.dropped(entry, why);
  }

  private list(ttlMs: number): RecencyList<T> {
    let list = this.lists.get(ttlMs);
    if (list === undefined) {
      list = new RecencyList();
      this.lists.set(ttlMs, list);
    }
    return list;
  }
}
