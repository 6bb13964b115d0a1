/**
 * One timer for every throttled record subscription: items due in the same tick share a
 * bucket, and a single interval runs only while something is scheduled. Scheduling and
 * firing are O(1) per item, so a throttle window costs what changed in it.
 */
export class ThrottleWheel<T> {
  private readonly buckets = new Map<number, T[]>();
  private timer: NodeJS.Timeout | null = null;
  private cursor: number;

  constructor(
    private readonly tickMs: number,
    private readonly fire: (item: T) => void,
  ) {
    this.cursor = Math.floor(Date.now() / tickMs);
  }

  /** Fires `item` once, `delayMs` from now (rounded up to the next tick). */
  schedule(item: T, delayMs: number): void {
    const tick = Math.ceil((Date.now() + delayMs) / this.tickMs);
    const bucket = this.buckets.get(tick);
    if (bucket === undefined) this.buckets.set(tick, [item]);
    else bucket.push(item);
    if (this.timer === null) {
      // Idle until now: nothing is pending, so start from the present instead of walking
      // every empty slot since the wheel last ran.
      this.cursor = Math.floor(Date.now() / this.tickMs);
      this.timer = setInterval(() => this.advance(), this.tickMs);
      this.timer.unref();
    }
  }

  get size(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.length;
    return n;
  }

  /** Fires everything due up to now. */
  advance(now = Date.now()): void {
    const target = Math.floor(now / this.tickMs);
    if (target - this.cursor > this.buckets.size * 2 + 16) {
      // A stalled event loop: visit the buckets due, not every slot in between.
      const dueTicks = [...this.buckets.keys()].filter((t) => t <= target).sort((a, b) => a - b);
      for (const tick of dueTicks) this.fireBucket(tick);
      this.cursor = target;
      this.stopWhenEmpty();
      return;
    }
    for (; this.cursor <= target; this.cursor++) {
      this.fireBucket(this.cursor);
    }
    this.cursor = target;
    this.stopWhenEmpty();
  }

  private fireBucket(tick: number): void {
    const bucket = this.buckets.get(tick);
    if (bucket === undefined) return;
    this.buckets.delete(tick);
    for (const item of bucket) this.fire(item);
  }

  private stopWhenEmpty(): void {
    if (this.buckets.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.buckets.clear();
  }
}
