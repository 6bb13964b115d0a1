/**
 * Which transports the connection may use: the configured ones in order of preference,
 * narrowed to those the server offers, with the ones that failed while a later one worked
 * set aside until a probe shows they work again.
 */
import type { TransportFactory } from './transports/transport.js';

/**
 * Why the client is on its transport (the `transport` event's third argument):
 * `'preferred'` the most preferred one the server offers; `'failed'` a more preferred one
 * could not open or stopped working; `'buffered'` the stream of `streaming` did not start
 * within `streamSenseTimeout` (a proxy buffers responses); `'probe'` a probe moved back to
 * a more preferred one.
 */
export type TransportReason = 'preferred' | 'failed' | 'buffered' | 'probe';

export class TransportSelector {
  private readonly configured: readonly TransportFactory[];
  /** Connection types the server offered in its last handshake reply; `null` before one. */
  private serverTypes: string[] | null = null;
  /** Transports set aside, and why. */
  private readonly demoted = new Map<string, TransportReason>();

  constructor(configured: readonly TransportFactory[]) {
    this.configured = configured;
  }

  /** The names sent as the handshake's `supportedConnectionTypes`. */
  get names(): string[] {
    return this.configured.map((f) => f.name);
  }

  /** Records what the server offered (anything but an array means "unknown"). */
  serverOffers(types: unknown): void {
    this.serverTypes = Array.isArray(types) ? types.filter((t): t is string => typeof t === 'string') : null;
  }

  offers(name: string): boolean {
    return this.serverTypes === null || this.serverTypes.includes(name);
  }

  /** The configured transports the server offers, in order of preference. */
  offered(): TransportFactory[] {
    return this.configured.filter((f) => this.offers(f.name));
  }

  /** What to try when connecting: the offered ones not set aside (all offered if none is left). */
  candidates(): TransportFactory[] {
    const offered = this.offered();
    const usable = offered.filter((f) => !this.demoted.has(f.name));
    return usable.length > 0 ? usable : offered;
  }

  /** The most preferred offered transport, when `active` is not it: the one to probe. */
  better(active: string): TransportFactory | undefined {
    const offered = this.offered();
    return offered.findIndex((f) => f.name === active) > 0 ? offered[0] : undefined;
  }

  demote(names: readonly string[], reason: TransportReason = 'failed'): void {
    for (const name of names) this.demoted.set(name, reason);
  }

  /** Why `active` is used: what set aside the nearest more preferred offered transport. */
  reason(active: string): TransportReason {
    let reason: TransportReason = 'preferred';
    for (const f of this.offered()) {
      if (f.name === active) break;
      reason = this.demoted.get(f.name) ?? reason;
    }
    return reason;
  }

  promote(name: string): void {
    this.demoted.delete(name);
  }

  reset(): void {
    this.serverTypes = null;
    this.demoted.clear();
  }
}
