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

/**
 * The one backoff every reconnect of a connection goes through, whatever failed: an attempt
 * on every transport, a WebSocket cut, a stream that errs or ends early, a connect refused
 * (`402`, `503`), a dead link. The delay is the backoff's, or the server's advice
 * (`interval`, `Retry-After`) when that is longer. It starts over only once a connection
 * stayed up `stableAfter` ms (the largest delay): a server that accepts and then fails at
 * once keeps the delays growing instead of looping.
 */
export class Pace {
  private readonly backoff: Backoff;
  /** When the connection last came up and has not failed since (0: not up). */
  private since = 0;

  constructor(
    min: number,
    max: number,
    private readonly stableAfter = max,
  ) {
    this.backoff = new Backoff(min, max);
  }

  /** The connection is up (connected, a connect answered): the clock of its stability runs. */
  up(): void {
    if (this.since === 0) this.since = Date.now();
  }

  /** Whether the connection has been up for `stableAfter` ms without a failure. */
  get stable(): boolean {
    return this.since !== 0 && Date.now() - this.since >= this.stableAfter;
  }

  /**
   * How long an attempt waits for its transport to open: `wsOpenTimeout`, doubled for each
   * failed attempt since the connection was last stable, up to `connectDeadline`. A fixed
   * wait shorter than a loaded server takes to upgrade made a crowd's every attempt give up
   * and try again (a 10,000-client storm: WebSocket-only clients never connected again).
   */
  open(o: { wsOpenTimeout: number; connectDeadline: number }): number {
    return Math.min(
      o.wsOpenTimeout * 2 ** this.backoff.attempts,
      Math.max(o.wsOpenTimeout, o.connectDeadline),
    );
  }

  /** The delay before the next attempt: the backoff's, or `advised` (ms) if longer. */
  next(advised?: number | null): number {
    if (this.stable) this.backoff.reset();
    this.since = 0;
    return Math.max(advised ?? 0, this.backoff.next());
  }

  reset(): void {
    this.since = 0;
    this.backoff.reset();
  }
}
