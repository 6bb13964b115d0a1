/**
 * Providers feed record subjects on demand: `onRequest(subject)` when a subject gets its
 * first subscriber, `onDiscard(subject)` when its last one left and stayed gone for the
 * linger period — so a feed only produces what someone watches, and a subscriber who
 * flickers away and back does not restart it.
 */
import { expandChannel } from '@bayou/protocol';
import { ThrottleWheel } from './throttle-wheel.js';

export interface Provider {
  onRequest(subject: string): void;
  onDiscard?(subject: string): void;
}

interface Lease {
  provider: Provider;
  /** When the subject becomes discardable; 0 while it has subscribers. */
  discardAt: number;
}

export class ProviderLeases {
  private readonly providers = new Map<string, Provider>();
  private readonly leases = new Map<string, Lease>();
  private readonly wheel: ThrottleWheel<string>;

  constructor(
    private readonly lingerMs: number,
    private readonly onDiscarded: (subject: string) => void,
  ) {
    this.wheel = new ThrottleWheel<string>(50, (subject) => this.maybeDiscard(subject));
  }

  add(pattern: string, provider: Provider): void {
    this.providers.set(pattern, provider);
  }

  has(pattern: string): boolean {
    return this.providers.has(pattern);
  }

  firstSubscriber(subject: string): void {
    const lease = this.leases.get(subject);
    if (lease !== undefined) {
      lease.discardAt = 0;
      return;
    }
    const provider = this.providerFor(subject);
    if (provider === undefined) return;
    this.leases.set(subject, { provider, discardAt: 0 });
    provider.onRequest(subject);
  }

  lastSubscriberLeft(subject: string): void {
    const lease = this.leases.get(subject);
    if (lease === undefined) return;
    lease.discardAt = Date.now() + this.lingerMs;
    this.wheel.schedule(subject, this.lingerMs);
  }

  stop(): void {
    this.wheel.stop();
  }

  private maybeDiscard(subject: string): void {
    const lease = this.leases.get(subject);
    if (lease === undefined || lease.discardAt === 0 || Date.now() < lease.discardAt) return;
    this.leases.delete(subject);
    lease.provider.onDiscard?.(subject);
    this.onDiscarded(subject);
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
