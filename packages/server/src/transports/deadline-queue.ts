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

export class DeadlineQueue<T> {
  private items: T[] = [];
  private deadlines: number[] = [];
  private head = 0;

  constructor(private readonly timeout: number) {}

  add(item: T, now: number): void {
    this.items.push(item);
    this.deadlines.push(now + this.timeout);
  }

  /**
   * Takes the items whose deadline is `now` or earlier, oldest first, and hands each to
   * `due`; at most `limit` of them (the rest stay first in line for the next call).
   */
  expire(now: number, due: (item: T) => void, limit = Number.POSITIVE_INFINITY): void {
    let taken = 0;
    while (taken++ < limit && this.head < this.items.length && (this.deadlines[this.head] as number) <= now) {
      const item = this.items[this.head] as T;
      this.items[this.head] = undefined as T;
      this.head++;
      due(item);
    }
    // Compact once the expired prefix is most of the arrays.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.deadlines = this.deadlines.slice(this.head);
      this.head = 0;
    }
  }

  /** Items waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  clear(): void {
    this.items = [];
    this.deadlines = [];
    this.head = 0;
  }
}
