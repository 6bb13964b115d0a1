/**
 * Coalesces notifications to animation frames: however many record updates arrive
 * between two frames, each pending callback runs once, in the next frame, so React
 * renders (and the browser paints) at most once per frame.
 */

/** Runs `flush` later: at the next animation frame, or at once for `synchronous`. */
export type Schedule = (flush: () => void) => void;

/** The next animation frame; a 16 ms timer where there is none (Node, hidden iframes). */
export const animationFrame: Schedule = (flush) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => flush());
  else setTimeout(flush, 16);
};

/** No coalescing: every notification is delivered when it happens. */
export const synchronous: Schedule = (flush) => flush();

export class FrameBatcher {
  private pending = new Set<() => void>();
  private scheduled = false;

  constructor(private readonly schedule: Schedule) {}

  /** Runs `callback` once in the next flush (enqueuing it twice before then still runs it once). */
  enqueue(callback: () => void): void {
    this.pending.add(callback);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const callbacks = this.pending;
    this.pending = new Set();
    for (const callback of callbacks) callback();
  };
}
