/**
 * Which handshakes a node admits now (issue #35): none while it drains, and no more than
 * `handshakeRate` a second (a token bucket holding up to one second's worth; `0` = no limit).
 * A handshake past either is refused `503::node_busy` with `reconnect: handshake` and a
 * jittered `interval`, which CometD, Faye and `@bayou/client` wait and retry (never
 * `reconnect: none`, which stops a client); an HTTP answer carries it as `Retry-After` too.
 * Sessions that exist are never refused: only `/meta/handshake` asks here.
 *
 * The advised interval paces the refused: each is given the next free slot of the bucket
 * after those already told to come back (`rate` a second), spread by a jitter of up to one
 * slot-second, so a flood comes back as a ramp at about the rate, not as a second wall.
 */
export interface Refusal {
  readonly args: string;
  /** ms the client is told to wait (`advice.interval`). */
  readonly interval: number;
}

/** The most a refused client is told to wait, however long the queue of the refused. */
const MAX_WAIT_MS = 30_000;

export class Admission {
  private tokens: number;
  private refilled: number;
  /** When the last refused handshake was told to come back (ms since epoch). */
  private promised = 0;
  /** While draining: the jitter (ms) of the interval a refused handshake is advised. */
  private drainJitter = -1;

  constructor(
    private readonly rate: number,
    private readonly random: () => number = Math.random,
    now = Date.now(),
  ) {
    this.tokens = rate;
    this.refilled = now;
  }

  /** The node drains: every handshake from now on is refused, told to come back after up to `jitter` ms. */
  drain(jitter: number): void {
    this.drainJitter = Math.max(0, jitter);
  }

  /** `null` to admit a handshake now; otherwise why not and how long to wait. */
  handshake(now = Date.now()): Refusal | null {
    if (this.drainJitter >= 0) {
      // Elsewhere: a balancer reading /readyz sends the retry to another node.
      return { args: 'draining', interval: 1 + Math.floor(this.random() * this.drainJitter) };
    }
    if (this.rate <= 0) return null;
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.refilled) * this.rate) / 1000);
    this.refilled = now;
    if (this.tokens >= 1) {
      this.tokens--;
      return null;
    }
    const slot = 1000 / this.rate;
    this.promised = Math.min(Math.max(this.promised, now) + slot, now + MAX_WAIT_MS);
    const base = this.promised - now;
    return { args: 'handshake_rate', interval: Math.ceil(base + this.random() * Math.min(1000, base)) };
  }
}
