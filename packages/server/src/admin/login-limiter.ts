/**
 * Failed console logins per client IP: past `maxFailures` within `windowMs`, every login
 * from that IP is refused (429) until its window ends, right password or not, so guessing
 * is slow and a refusal says nothing about the guess. At most `maxTracked` IPs are kept
 * (the oldest window is forgotten first).
 */
export interface LoginLimits {
  maxFailures: number;
  windowMs: number;
  maxTracked: number;
}

export const LOGIN_LIMITS: LoginLimits = { maxFailures: 10, windowMs: 60_000, maxTracked: 10_000 };

interface Window {
  failures: number;
  endsAt: number;
}

export class LoginLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly limits: LoginLimits = LOGIN_LIMITS) {}

  /** Milliseconds until `ip` may try again, or 0 when it may now. */
  blockedFor(ip: string, now = Date.now()): number {
    const w = this.windows.get(ip);
    if (w === undefined) return 0;
    if (w.endsAt <= now) {
      this.windows.delete(ip);
      return 0;
    }
    return w.failures >= this.limits.maxFailures ? w.endsAt - now : 0;
  }

  failed(ip: string, now = Date.now()): void {
    const w = this.windows.get(ip);
    if (w !== undefined && w.endsAt > now) {
      w.failures++;
      return;
    }
    this.windows.delete(ip);
    if (this.windows.size >= this.limits.maxTracked) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    this.windows.set(ip, { failures: 1, endsAt: now + this.limits.windowMs });
  }

  /** IPs tracked now (for the bound's test). */
  get size(): number {
    return this.windows.size;
  }
}
