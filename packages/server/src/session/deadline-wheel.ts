/**
 * The deadlines of a node's sessions — a held connect's, an idle session's expiry — on a
 * timer wheel, so the shared sweep (every `sweepInterval`) touches only the sessions whose
 * deadline is due instead of every session every sweep: at 512,000 idle heartbeat sessions,
 * each with a connect held `heartbeatTimeout` (5 min), a sweep a second visits about 1,700
 * of them, not 512,000.
 *
 * Time is cut into ticks of one sweep interval, the ticks into `slots` slots round a wheel
 * (1,024: 17 min at 1 s). An item waits in the slot of its deadline's tick (a deadline already
 * past, in the slot the next sweep visits first); a sweep visits the slots of the ticks from
 * where the last one stopped up to `now`'s and takes out the items due. An item due a whole
 * turn or more later is passed over once a turn. Filing and taking out are O(1) (a swap with
 * the slot's last item); an item costs one array entry and one number of its own, its
 * `deadlineSpot`, and an item without a deadline (a session removed, one held on a stream)
 * is on no slot: the wheel holds only what is live.
 */

/** An item of the wheel: its place, written by the wheel only (`-1` while not on it). */
export interface DeadlineItem {
  deadlineSpot: number;
}

/** The most slots (and the factor that packs a slot and an index into one `deadlineSpot`). */
const MAX_SLOTS = 1024;

export class DeadlineWheel<T extends DeadlineItem> {
  private readonly slots: T[][];
  /** The tick the next sweep visits first: the slots of earlier ticks hold nothing due before it. */
  private cursor: number;
  private count = 0;

  /**
   * `deadlineOf` is an item's deadline (ms since the epoch, `Infinity` for none); `tick` the
   * sweep interval; `now` where the wheel starts.
   */
  constructor(
    private readonly tick: number,
    private readonly deadlineOf: (item: T) => number,
    now: number,
    slots = MAX_SLOTS,
  ) {
    this.slots = Array.from({ length: Math.max(1, Math.min(MAX_SLOTS, slots)) }, () => []);
    this.cursor = Math.floor(now / tick);
  }

  /** Items on the wheel. */
  get size(): number {
    return this.count;
  }

  /** Files `item` under its deadline as it is now (after any change of it); off the wheel without one. */
  file(item: T): void {
    const deadline = this.deadlineOf(item);
    if (deadline === Number.POSITIVE_INFINITY) {
      this.drop(item);
      return;
    }
    const slot = Math.max(Math.floor(deadline / this.tick), this.cursor) % this.slots.length;
    if (item.deadlineSpot !== -1 && item.deadlineSpot % MAX_SLOTS === slot) return;
    this.drop(item);
    const list = this.slots[slot] as T[];
    item.deadlineSpot = list.length * MAX_SLOTS + slot;
    list.push(item);
    this.count++;
  }

  /** Takes `item` off the wheel (if on it). */
  drop(item: T): void {
    const spot = item.deadlineSpot;
    if (spot === -1) return;
    const list = this.slots[spot % MAX_SLOTS] as T[];
    const last = list.pop() as T;
    if (last !== item) {
      list[Math.floor(spot / MAX_SLOTS)] = last;
      last.deadlineSpot = spot;
    }
    item.deadlineSpot = -1;
    this.count--;
  }

  /**
   * Takes off the wheel every item whose deadline is `now` or earlier and returns them (for
   * the caller to handle, and to file again if they keep a deadline).
   */
  due(now: number): T[] {
    const n = this.slots.length;
    const last = Math.max(Math.floor(now / this.tick), this.cursor);
    const taken: T[] = [];
    for (let t = this.cursor; t <= Math.min(last, this.cursor + n - 1); t++) {
      const list = this.slots[t % n] as T[];
      // Backwards: an item taken out is replaced by the last one, already looked at.
      for (let i = list.length - 1; i >= 0; i--) {
        const item = list[i] as T;
        if (this.deadlineOf(item) > now) continue;
        this.drop(item);
        taken.push(item);
      }
    }
    // The last tick's slot may still hold items due later in that tick: the next sweep starts there.
    this.cursor = last;
    return taken;
  }

  /** Takes every item off. */
  clear(): void {
    for (const list of this.slots) {
      for (const item of list) item.deadlineSpot = -1;
      list.length = 0;
    }
    this.count = 0;
  }
}
