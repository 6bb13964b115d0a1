/**
 * Providers feed record subjects on demand: `onRequest(subject)` when a subject gets its
 * first subscriber anywhere in the cluster, `onDiscard(subject)` when its last one left
 * and stayed gone for the linger period — so a feed only produces what someone watches.
 *
 * Exactly one node runs the provider of a subject: the one holding the engine lease
 * `provider:<subject>`. Every node with local subscribers tries to take the lease; the
 * holder renews it on a shared timer, and when it dies the lease expires and another node
 * with subscribers takes over at its next renewal tick. Counts go through the engine's
 * presence, so "last one gone" is cluster-wide.
 */
import { expandChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { Leases, Presence } from '../engine/engine.js';
import { ThrottleWheel } from './throttle-wheel.js';

export interface Provider {
  onRequest(subject: string): void;
  onDiscard?(subject: string): void;
}

export interface ProviderTiming {
  /** ms a subject's provider is kept after its last subscriber left. */
  readonly lingerMs: number;
  /** ms a provider lease lasts unless renewed (renewed every third of it). */
  readonly leaseMs: number;
}

interface Subject {
  readonly provider: Provider;
  /** Subscribers on this node. */
  local: number;
  /** Whether this node holds the lease and runs the provider. */
  running: boolean;
  /** When the subject may be discarded; 0 while it has subscribers. */
  discardAt: number;
}

export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();
  private readonly subjects = new Map<string, Subject>();
  private readonly wheel: ThrottleWheel<string>;
  private renewTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly timing: ProviderTiming,
    private readonly leases: Leases,
    private readonly presence: Presence,
    private readonly log: FastifyBaseLogger,
    /** The provider let go of `subject`: its image is stale. */
    private readonly onDiscarded: (subject: string) => void,
  ) {
    this.wheel = new ThrottleWheel<string>(50, (subject) => void this.maybeDiscard(subject));
  }

  add(pattern: string, provider: Provider): void {
    this.providers.set(pattern, provider);
  }

  has(pattern: string): boolean {
    return this.providers.has(pattern);
  }

  /** Whether some provider feeds `subject`. */
  covers(subject: string): boolean {
    return this.providerFor(subject) !== undefined;
  }

  /**
   * A subscriber of `subject` arrived on this node. For the first one, resolves once the
   * provider runs somewhere (here, if this node took the lease); rejects when its
   * `onRequest` threw, so the subscription can be refused.
   */
  subscribed(subject: string): Promise<void> | undefined {
    let s = this.subjects.get(subject);
    if (s === undefined) {
      const provider = this.providerFor(subject);
      if (provider === undefined) return undefined;
      s = { provider, local: 0, running: false, discardAt: 0 };
      this.subjects.set(subject, s);
    }
    s.local++;
    s.discardAt = 0;
    if (s.local !== 1) return undefined;
    const subj = s;
    return this.report(subject, subj).then(() => this.claim(subject, subj));
  }

  /** A subscriber of `subject` left this node. */
  unsubscribed(subject: string): void {
    const s = this.subjects.get(subject);
    if (s === undefined || s.local === 0) return;
    s.local--;
    if (s.local > 0) return;
    void this.report(subject, s);
    s.discardAt = Date.now() + this.timing.lingerMs;
    this.wheel.schedule(subject, this.timing.lingerMs);
  }

  /** Renews held leases and tries to take over subjects whose provider is gone. */
  async renew(): Promise<void> {
    for (const [subject, s] of this.subjects) {
      if (s.running) {
        const kept = await this.leases.renew(leaseName(subject), this.timing.leaseMs).catch(() => false);
        if (!kept) this.halt(subject, s);
      } else if (s.local > 0) {
        await this.claim(subject, s).catch((err: unknown) => {
          this.log.error({ err, subject }, 'record provider failed');
        });
      }
    }
  }

  startRenewing(): void {
    this.renewTimer = setInterval(() => void this.renew(), Math.max(10, this.timing.leaseMs / 3));
    this.renewTimer.unref();
  }

  close(): void {
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    this.renewTimer = null;
    this.wheel.stop();
  }

  /** Another node took the lease over (this one stalled): stop producing here. */
  private halt(subject: string, s: Subject): void {
    s.running = false;
    this.log.warn({ subject }, 'provider lease lost; provider stopped on this node');
    this.call(() => s.provider.onDiscard?.(subject), subject);
  }

  /** Takes the lease when free and starts the provider; rethrows what `onRequest` threw. */
  private async claim(subject: string, s: Subject): Promise<void> {
    if (s.running || s.local === 0) return;
    const got = await this.leases.acquire(leaseName(subject), this.timing.leaseMs).catch((err: unknown) => {
      this.log.warn({ err, subject }, 'provider lease could not be taken');
      return false;
    });
    if (!got || s.running) return;
    s.running = true;
    try {
      s.provider.onRequest(subject);
    } catch (err) {
      s.running = false;
      await this.leases.release(leaseName(subject)).catch(() => undefined);
      throw err;
    }
  }

  private async report(subject: string, s: Subject): Promise<void> {
    await this.presence.setCount(subject, s.local).catch((err: unknown) => {
      this.log.warn({ err, subject }, 'presence count could not be updated');
    });
  }

  private async maybeDiscard(subject: string): Promise<void> {
    const s = this.subjects.get(subject);
    if (s === undefined || s.discardAt === 0 || Date.now() < s.discardAt) return;
    if (s.local > 0) return;
    // Subscribers on other nodes keep the provider running here: look again later.
    const total = await this.presence.count(subject).catch(() => 1);
    if (total > 0) {
      if (s.running && s.local === 0) {
        s.discardAt = Date.now() + this.timing.lingerMs;
        this.wheel.schedule(subject, this.timing.lingerMs);
      }
      return;
    }
    this.subjects.delete(subject);
    if (!s.running) return;
    s.running = false;
    await this.leases.release(leaseName(subject)).catch(() => undefined);
    this.call(() => s.provider.onDiscard?.(subject), subject);
    this.onDiscarded(subject);
  }

  private call(fn: () => void, subject: string): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, subject }, 'record provider failed');
    }
  }

  private providerFor(subject: string): Provider | undefined {
    if (this.providers.size === 0) return undefined;
    for (const name of expandChannel(subject)) {
      const p = this.providers.get(name);
      if (p !== undefined) return p;
    }
    return undefined;
  }
}

function leaseName(subject: string): string {
  return `provider:${subject}`;
}
