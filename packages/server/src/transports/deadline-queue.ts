/**
 * Items that each get the same time to prove themselves (a connection its first byte, a
 * WebSocket its Bayeux handshake), checked by a shared sweep instead of a timer each. They
 * are added in time order with one timeout, so their deadlines are in order too: a sweep
 * looks only at the items that are due, and memory holds only what arrived within one
 * timeout (an item that proved itself early just waits at its place to be dropped), plus
 * what the per-sweep limit leaves for the next sweep.
 */

/**
 * Sockets one sweep (every 100 ms at most) closes for the handshake timeout: a flood's
 * worth falling due together is closed over several turns of bounded length (each close
 * is a write and a close of the socket: tens of µs, more on a loaded machine) rather than
 * in one turn that stalls every real client; the rest are first in line for the next.
 */
export const CLOSES_PER_SWEEP = 500;

/** The fewest slots a queue keeps once it has grown (it halves down to this). */
const MIN_CAPACITY = 1024;

/**
 * A ring of slots: an item due is taken from the front and its slot used again by a later
 * `add`, so a queue whose items come back again and again (every open WebSocket is looked
 * at once per handshake timeout, then added again) allocates nothing once it is as large as
 * what it holds; arrays that were cut and copied instead cost an idle server a few MB of
 * garbage per timeout, most of it in the old generation. It doubles when full, and halves
 * once a quarter full (never below `MIN_CAPACITY`), so it keeps room for about what arrived
 * within one timeout.
 */
export class DeadlineQueue<T> {
  private items: (T | undefined)[] = [];
  private deadlines = new Float64Array(0);
  /** The slot of the oldest item. */
  private head = 0;
  private count = 0;

  constructor(private readonly timeout: number) {}

  add(item: T, now: number): void {
    if (this.count === this.items.length) this.resize(Math.max(16, this.count * 2));
    const slot = (this.head + this.count) % this.items.length;
    this.items[slot] = item;
    this.deadlines[slot] = now + this.timeout;
    this.count++;
  }

  /**
   * Takes the items whose deadline is `now` or earlier, oldest first, and hands each to
   * `due` (which may add items); at most `limit` of them (the rest stay first in line for
   * the next call).
   */
  expire(now: number, due: (item: T) => void, limit = Number.POSITIVE_INFINITY): void {
    let taken = 0;
    while (taken++ < limit && this.count > 0 && (this.deadlines[this.head] as number) <= now) {
      const item = this.items[this.head] as T;
      this.items[this.head] = undefined;
      this.head = (this.head + 1) % this.items.length;
      this.count--;
      due(item);
    }
    const capacity = this.items.length;
    if (capacity > MIN_CAPACITY && this.count * 4 < capacity) this.resize(capacity / 2);
  }

  /** Items waiting. */
  get size(): number {
    return this.count;
  }

  clear(): void {
    this.items = [];
    this.deadlines = new Float64Array(0);
    this.head = 0;
    this.count = 0;
  }

  /** Moves the items, oldest first, to new arrays of `capacity` slots. */
  private resize(capacity: number): void {
    const items = new Array<T | undefined>(capacity).fill(undefined);
    const deadlines = new Float64Array(capacity);
    const old = this.items.length;
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % old;
      items[i] = this.items[from];
      deadlines[i] = this.deadlines[from] as number;
    }
    this.items = items;
    this.deadlines = deadlines;
    this.head = 0;
  }
}
