/**
 * The dead-link watchdog of a WebSocket. After `limit / 2` ms without a frame it asks for
 * the held connect to be renewed (a new `/meta/connect` supersedes it, so the server
 * answers the old one at once); if still nothing arrives within `0.4 · limit` ms, the link
 * is dead. So a silent link is given up within 90% of `limit`, leaving the rest for the
 * reconnect. A timer that fires late (a throttled background tab) only renews: a link is
 * declared dead only after a renewal went unanswered.
 */
export interface WatchdogHooks {
  /** Renew the held connect, if one is held. */
  renew(): void;
  /** The renewal went unanswered: give the link up. */
  dead(): void;
}

export class LinkWatchdog {
  /** When the link last received a frame, and when the silence made us renew (0: not since). */
  private lastHeard = 0;
  private renewedAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The time within which a silent link is given up (may change between links). */
  limit: number;
  private readonly hooks: WatchdogHooks;

  constructor(limit: number, hooks: WatchdogHooks) {
    this.limit = limit;
    this.hooks = hooks;
  }

  /** Watches a link that just became active (from now on). */
  start(): void {
    this.lastHeard = Date.now();
    this.renewedAt = 0;
    this.check();
  }

  /** The link received a frame: it is alive. */
  heard(): void {
    this.lastHeard = Date.now();
    this.renewedAt = 0;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const limit = this.limit;
    const now = Date.now();
    if (this.renewedAt === 0 && now - this.lastHeard >= limit / 2) {
      this.renewedAt = now;
      this.hooks.renew();
    } else if (this.renewedAt !== 0 && now - this.renewedAt >= limit * 0.4) {
      this.hooks.dead();
      return;
    }
    const due = this.renewedAt === 0 ? this.lastHeard + limit / 2 : this.renewedAt + limit * 0.4;
    this.timer = setTimeout(() => this.check(), Math.max(1, due - now));
  }
}
