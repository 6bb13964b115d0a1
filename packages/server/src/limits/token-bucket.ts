/**
 * A token bucket as two numbers and a pure function: a holder (a session, an IP entry)
 * keeps a `BucketState`, and `take` refills it from the elapsed time at the moment of use.
 * No timers: an idle bucket costs nothing until its next use.
 */

export interface BucketState {
  /** Tokens left, fractional. */
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

export interface BucketSpec {
  /** Tokens added per second. */
  rate: number;
  /** Most tokens the bucket holds: the burst allowed after a quiet period. */
  burst: number;
}

export function fullBucket(spec: BucketSpec, now: number): BucketState {
  return { tokens: spec.burst, at: now };
}

function refill(state: BucketState, spec: BucketSpec, now: number): void {
  if (now > state.at) {
    state.tokens = Math.min(spec.burst, state.tokens + ((now - state.at) * spec.rate) / 1000);
    state.at = now;
  } else if (now < state.at) {
    // The clock went back: restart the measure from here, keeping what is left.
    state.at = now;
  }
}

/**
 * Takes `cost` tokens. Returns `0` when they were there (and are now taken), otherwise the
 * milliseconds until they will be (nothing is taken): the `retry after` to advise.
 */
export function take(state: BucketState, spec: BucketSpec, now: number, cost = 1): number {
  refill(state, spec, now);
  if (state.tokens >= cost) {
    state.tokens -= cost;
    return 0;
  }
  if (cost > spec.burst || spec.rate <= 0) return Number.POSITIVE_INFINITY;
  // The epsilon keeps float noise (0.99 tokens → 1.0000000001 ms) from adding a millisecond.
  return Math.max(1, Math.ceil(((cost - state.tokens) * 1000) / spec.rate - 1e-9));
}

/** Whether the bucket would be full now: its holder can be forgotten without changing any answer. */
export function isFull(state: BucketState, spec: BucketSpec, now: number): boolean {
  refill(state, spec, now);
  return state.tokens >= spec.burst;
}
