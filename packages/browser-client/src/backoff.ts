/**
 * Full-jitter exponential backoff, as centrifuge-js does it: the n-th delay is
 * `min + uniform(0, min(max, min · 2ⁿ))`, capped at `max`. The jitter spreads a crowd of
 * clients that lost the same server instead of synchronising them; the `min` floor keeps
 * one client from hammering a server that just went away.
 */
export class Backoff {
  private attempt = 0;
  private readonly min: number;
  private readonly max: number;
  private readonly random: () => number;

  constructor(min: number, max: number, random: () => number = Math.random) {
    this.min = min;
    this.max = max;
    this.random = random;
  }

  /** The delay before the next attempt; each call doubles the ceiling up to `max`. */
  next(): number {
    const ceiling = Math.min(this.max, this.min * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.min(this.max, this.min + Math.floor(this.random() * ceiling));
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
