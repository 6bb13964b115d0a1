/**
 * Delivery probes: a pub/sub connection can stay up while nothing arrives on it (after a
 * Sentinel failover, a half-dead proxy or NAT entry), and then a node delivers nothing
 * while every check that only looks at the socket stays green. Every `intervalMs` the node
 * publishes a probe (on its command connection) to a pub/sub name only it follows, and
 * expects it back on its subscriber connection before the next tick. One that does not
 * come back marks the node not ready (`/readyz` 503), counts a failure, is reported once,
 * and drops the subscriber connection so it is opened again; the reconnect resubscribes
 * and delivers from history what the node missed (`DeliveryGate.catchUp`). The next probe
 * that comes back makes the node ready again.
 *
 * A busy event loop is not a silent connection: a tick that fires late (the loop was held
 * past the interval, as by a node fanning a large burst out) does not judge the probe, whose
 * answer may be waiting unread in the socket, and an overdue probe is judged only after the
 * turn's poll phase has read what waits there. Before, the 512,000-session broadcast held
 * three nodes' loops past 5 s; each dropped its subscriber connection with the broadcast's
 * messages still in it.
 *
 * At most one probe is in flight; none is sent while the node follows no channel (its
 * own inbox aside), while the subscriber connection is down or catching up, or while it
 * and the command connection are on different servers (a Sentinel failover half done).
 */

export interface ProbeHost {
  /** Whether a probe should go out now (channels followed, connection up and caught up). */
  probing(): boolean;
  /** Publishes `nonce` on the probe name; a failure to send is not a missing probe. */
  send(nonce: string): Promise<unknown>;
  /** Drops the subscriber connection so that it reconnects and resubscribes. */
  reconnect(): void;
  /** Reports a change: the node stopped or started receiving its probes. */
  notice(level: 'warn' | 'info', message: string): void;
}

export class DeliveryProbe {
  /** Probes that did not come back in time. */
  failures = 0;
  /** Probes that came back in time. */
  passes = 0;
  private inFlight: { nonce: string; sentAt: number } | null = null;
  private failed = false;
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  /** When the latest tick ran (`null` before the first). */
  private lastTick: number | null = null;

  constructor(
    private readonly host: ProbeHost,
    /** Milliseconds between probes, and how long one may take; 0 turns probes off. */
    readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
    /** Runs a check after the current turn's poll phase (`setImmediate`). */
    private readonly afterPoll: (check: () => void) => void = (check) => setImmediate(check),
  ) {}

  start(): void {
    if (this.intervalMs === 0 || this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.inFlight = null;
  }

  /** Whether the latest probe came back (or none failed since the last that did). */
  healthy(): boolean {
    return !this.failed;
  }

  /** One tick: judges the probe in flight, else sends the next one. */
  tick(): void {
    const now = this.now();
    const late = this.lastTick !== null && now - this.lastTick > this.intervalMs * 1.2;
    this.lastTick = now;
    const probe = this.inFlight;
    if (probe !== null) {
      // A timer may fire a little early: judge a probe only after a full interval; and not
      // after a stall of the loop, when its answer may be unread yet (the next tick will).
      if (now - probe.sentAt < this.intervalMs * 0.9 || late) return;
      this.afterPoll(() => {
        if (this.inFlight !== probe) return;
        this.inFlight = null;
        this.missed();
      });
      return;
    }
    if (!this.host.probing()) return;
    const nonce = `${++this.seq}`;
    const sent = { nonce, sentAt: this.now() };
    this.inFlight = sent;
    this.host.send(nonce).catch(() => {
      // Not sent (Redis unreachable): the outage is seen elsewhere; try again next tick.
      if (this.inFlight === sent) this.inFlight = null;
    });
  }

  /** A message on the probe name. */
  received(nonce: string): void {
    if (this.inFlight === null || this.inFlight.nonce !== nonce) return;
    this.inFlight = null;
    this.passes++;
    if (!this.failed) return;
    this.failed = false;
    this.host.notice('info', 'Redis delivery probes come back again: the node is ready');
  }

  /** The subscriber connection went down or is catching up: a probe in flight is void. */
  void(): void {
    this.inFlight = null;
  }

  private missed(): void {
    this.failures++;
    if (!this.failed) {
      this.failed = true;
      this.host.notice(
        'warn',
        `Redis delivery probe not back within ${this.intervalMs} ms: the subscriber connection is up but silent; the node is not ready until a probe comes back, and reconnects it (missed messages come from history)`,
      );
    }
    this.host.reconnect();
  }
}
