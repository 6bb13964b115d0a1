/**
 * A timer wheel that visits each of its items once per `interval`, for a whole process's
 * worth of sockets on one timer: the heartbeat of the WebSockets whose session negotiated
 * it. The interval is cut into slots of about 100 ms; an item joins the slot the wheel just
 * left, so it is first visited one interval later, and items that join at different times
 * are spread over the interval (at 512,000 sockets and 30 s, about 1,700 a slot) instead of
 * visited in one burst. Joining and leaving are O(1) (a swap with the slot's last item), and
 * an item costs one array entry and one number of its own, its `wheelSpot`, so whatever the
 * wheel holds of a socket goes with it.
 */

/** An item of the wheel: its place, written by the wheel only (`-1` while not on it). */
export interface WheelItem {
  wheelSpot: number;
}

/** The most slots (and the factor that packs a slot and an index into one `wheelSpot`). */
const MAX_SLOTS = 1024;
/** The slot length aimed at, ms: short enough to spread the visits, long enough to cost nothing idle. */
const SLOT_MS = 100;

export class PingWheel<T extends WheelItem> {
  private readonly slots: T[][];
  /** The slot the next tick visits. */
  private cursor = 0;
  private count = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly tick: number;

  /**
   * `visit` is called for each item once per `interval` ms (after the first interval);
   * it returns `false` to take the item off the wheel.
   */
  constructor(
    readonly interval: number,
    private readonly visit: (item: T) => boolean,
  ) {
    const n = Math.max(1, Math.min(MAX_SLOTS - 1, Math.round(interval / SLOT_MS)));
    this.slots = Array.from({ length: n }, () => []);
    this.tick = interval / n;
  }

  /** Items on the wheel. */
  get size(): number {
    return this.count;
  }

  /** Puts `item` on the wheel (if not on it): first visited one interval from now. */
  add(item: T): void {
    if (item.wheelSpot !== -1) return;
    const n = this.slots.length;
    const slot = (this.cursor + n - 1) % n;
    const list = this.slots[slot] as T[];
    item.wheelSpot = list.length * MAX_SLOTS + slot;
    list.push(item);
    if (this.count++ === 0) this.start();
  }

  /** Takes `item` off the wheel (if on it). */
  remove(item: T): void {
    const spot = item.wheelSpot;
    if (spot === -1) return;
    const list = this.slots[spot % MAX_SLOTS] as T[];
    const index = Math.floor(spot / MAX_SLOTS);
    const last = list.pop() as T;
    if (last !== item) {
      list[index] = last;
      last.wheelSpot = spot;
    }
    item.wheelSpot = -1;
    if (--this.count === 0) this.stop();
  }

  /** Visits the slot under the cursor and moves on (called by the wheel's timer). */
  turn(): void {
    const list = this.slots[this.cursor] as T[];
    this.cursor = (this.cursor + 1) % this.slots.length;
    // Backwards: an item taken off is replaced by the last one, already visited.
    for (let i = list.length - 1; i >= 0; i--) {
      const item = list[i];
      if (item !== undefined && !this.visit(item)) this.remove(item);
    }
  }

  /** Takes every item off and stops. */
  clear(): void {
    for (const list of this.slots) {
      for (const item of list) item.wheelSpot = -1;
      list.length = 0;
    }
    this.count = 0;
    this.stop();
  }

  /** The timer runs only while the wheel holds something. */
  private start(): void {
    this.timer = setInterval(() => this.turn(), this.tick);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
