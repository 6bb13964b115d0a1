/**
 * Delivery probes on a Redis Cluster: one per shard the node follows a channel on. ioredis
 * opens one subscriber connection per shard master, and any one of them can go silent on
 * its own; a single probe name (one slot, so one shard) would watch only that shard's
 * connection. So the node counts the names it follows (its inbox aside) by hash slot, and
 * for each master serving one of those slots it keeps a probe name of its own that hashes
 * to that master (`{node:<id>:<k>}:probe`, the first `k` that lands there) and runs a
 * `DeliveryProbe` on it: at most one probe in flight per shard connection, and no probe
 * traffic to a shard where the node follows nothing (its probe name is unsubscribed and
 * forgotten once the last name there goes, unless its latest probe failed: then it goes on
 * until one comes back). A probe that does not come back marks the node not ready,
 * counts, is reported once per shard, and reconnects the subscriber (`ProbeHost.reconnect`),
 * whose resubscribe catches up from history.
 */
import type { Cluster } from 'ioredis';
import { DeliveryProbe, type ProbeHost } from './redis-probe.js';
import { keySlot } from './redis-slots.js';

export interface ShardProbeHost {
  /** Whether probes may go now (engine started, connections up and caught up). */
  probing(): boolean;
  /** The master (ioredis node key, `host:port`) serving `slot`, if known. */
  masterOf(slot: number): string | undefined;
  /** The probe name number `k` of this node. */
  topic(k: number): string;
  subscribe(topic: string): Promise<unknown>;
  unsubscribe(topic: string): Promise<unknown>;
  send(topic: string, nonce: string): Promise<unknown>;
  reconnect(): void;
  /** Drops the subscriber connections so that they reconnect, resubscribe and catch up. */
  resync(): void;
  notice(level: 'warn' | 'info', message: string): void;
}

interface Shard {
  readonly master: string;
  readonly topic: string;
  readonly probe: DeliveryProbe;
  subscribed: 'no' | 'pending' | 'yes';
}

/** Probe names tried for a master before giving up (each lands on one of the masters). */
const SEARCH = 100_000;

export class ShardProbes {
  /** Followed names by hash slot; a slot leaves when its last name does. */
  private readonly slots = new Map<number, number>();
  /** The shards probed, by master. */
  private readonly shards = new Map<string, Shard>();
  private timer: NodeJS.Timeout | null = null;
  /** When a dropped shard connection last resynced the node. */
  private resyncedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly host: ShardProbeHost,
    readonly intervalMs: number,
  ) {}

  /** A name's pub/sub name (`topic`) is followed now (`true`) or no longer (`false`). */
  followed(topic: string, yes: boolean): void {
    const slot = keySlot(topic);
    const n = (this.slots.get(slot) ?? 0) + (yes ? 1 : -1);
    if (n > 0) this.slots.set(slot, n);
    else this.slots.delete(slot);
  }

  start(): void {
    if (this.intervalMs === 0 || this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const s of this.shards.values()) s.probe.stop();
  }

  /** Whether every shard's latest probe came back. */
  healthy(): boolean {
    for (const s of this.shards.values()) if (!s.probe.healthy()) return false;
    return true;
  }

  /** Probes that came back, per master probed now. */
  passes(): Map<string, number> {
    return new Map([...this.shards.values()].map((s) => [s.master, s.probe.passes]));
  }

  /** Whether `topic` is a probe name of this node (then `message` was taken). */
  received(topic: string, message: string): boolean {
    for (const s of this.shards.values()) {
      if (s.topic !== topic) continue;
      s.probe.received(message);
      return true;
    }
    return false;
  }

  /** The subscriber connections dropped: probes in flight are void, names subscribed again. */
  void(): void {
    for (const s of this.shards.values()) {
      s.probe.void();
      s.subscribed = 'no';
    }
  }

  /** Follows `sub`'s shard connections: one that ends while `live()` is `dropped`. */
  watch(sub: Pick<Cluster, 'on'>, live: () => boolean): void {
    // ioredis names the master when a shard's subscriber connection ends (not when a command connection does).
    sub.on('-node', (_redis: unknown, master?: string) => {
      if (master !== undefined && live()) this.dropped(master);
    });
  }

  /**
   * The subscriber connection of the shard on `master` ended. ioredis opens another and
   * resubscribes it by itself, but what was published meanwhile never comes: when the node
   * follows a channel there, it resyncs (reconnect, resubscribe, catch up from history, tell
   * gaps) — at most once a probe interval, so a shard that stays down costs one resync per
   * interval, not one per ioredis retry.
   */
  dropped(master: string, now = performance.now()): void {
    if (!this.shards.has(master) || now - this.resyncedAt < this.intervalMs) return;
    this.resyncedAt = now;
    this.host.notice(
      'warn',
      `Redis Cluster shard ${master}: its subscriber connection dropped; resubscribing and catching up from history`,
    );
    this.host.resync();
  }

  /** One tick: the shards to probe follow the slots followed, then each shard's probe ticks. */
  tick(): void {
    const wanted = new Set<string>();
    for (const slot of this.slots.keys()) {
      const master = this.host.masterOf(slot);
      if (master !== undefined) wanted.add(master);
    }
    for (const [master, s] of this.shards) {
      // Unfollowed (and healthy), or its name moved to another master: dropped.
      const moved = this.host.masterOf(keySlot(s.topic)) !== master;
      if ((!wanted.has(master) && s.probe.healthy()) || moved) this.drop(s);
    }
    for (const master of wanted) if (!this.shards.has(master)) this.add(master);
    for (const s of this.shards.values()) {
      if (s.subscribed === 'yes') s.probe.tick();
      else if (s.subscribed === 'no' && this.host.probing()) this.subscribe(s);
    }
  }

  private add(master: string): void {
    for (let k = 0; k < SEARCH; k++) {
      const topic = this.host.topic(k);
      if (this.host.masterOf(keySlot(topic)) !== master) continue;
      const shard: Shard = {
        master,
        topic,
        subscribed: 'no',
        probe: new DeliveryProbe(
          this.probeHost(master, () => shard),
          this.intervalMs,
        ),
      };
      this.shards.set(master, shard);
      return;
    }
  }

  private drop(s: Shard): void {
    this.shards.delete(s.master);
    s.probe.stop();
    if (s.subscribed !== 'no') void this.host.unsubscribe(s.topic).catch(() => undefined);
  }

  private subscribe(s: Shard): void {
    s.subscribed = 'pending';
    this.host.subscribe(s.topic).then(
      () => {
        if (s.subscribed === 'pending') s.subscribed = 'yes';
      },
      () => {
        if (s.subscribed === 'pending') s.subscribed = 'no';
      },
    );
  }

  private probeHost(master: string, shard: () => Shard): ProbeHost {
    return {
      probing: () => this.host.probing() && shard().subscribed === 'yes',
      send: (nonce) => this.host.send(shard().topic, nonce),
      reconnect: () => this.host.reconnect(),
      notice: (level, message) => this.host.notice(level, `${message} (shard ${master})`),
    };
  }
}
