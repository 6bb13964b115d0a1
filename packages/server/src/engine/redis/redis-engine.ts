/**
 * The Redis engine: every part of the Engine contract on one Redis (or Redis Cluster)
 * shared by all nodes. This module owns the connections, the node's life (start,
 * heartbeat, reconnects, close) and its counters; the parts live in their own modules.
 */
import type { Cluster, Redis } from 'ioredis';
import type {
  Engine,
  EngineCapabilities,
  EngineConnectionStats,
  EngineNode,
  HistoryStats,
} from '../engine.js';
import { RedisBroker } from './redis-broker.js';
import { connect, createClient, dedupeShardChannels, describeRedis, isReady } from './redis-connections.js';
import type { RedisCore } from './redis-core.js';
import { RedisDirectory } from './redis-directory.js';
import { RedisHandover } from './redis-handover.js';
import { RedisHistory } from './redis-history.js';
import { RedisHistoryBound } from './redis-history-bound.js';
import { RedisKeys } from './redis-keys.js';
import { RedisLeases } from './redis-leases.js';
import { type RedisEngineOptions, type ResolvedRedisOptions, resolveRedisOptions } from './redis-options.js';
import { RedisPresence } from './redis-presence.js';
import { DeliveryProbe, type ProbeHost } from './redis-probe.js';
import { HEARTBEAT, type RedisClient, runScript } from './redis-scripts.js';
import { type ShardProbeHost, ShardProbes } from './redis-shard-probes.js';

/** Counters for metrics; they only grow. */
export interface RedisEngineStats {
  /** Failed Redis calls (outage, timeout, error reply) and connection errors. */
  errors: number;
  /** Times a connection to Redis came back after it was lost. */
  reconnects: number;
  /** Delivery probes that did not come back in time (`redis-probe.ts`). */
  probeFailures: number;
}

type EngineState = 'new' | 'starting' | 'started' | 'closed';

export class RedisEngine implements Engine, RedisCore {
  readonly options: ResolvedRedisOptions;
  readonly stats: RedisEngineStats = { errors: 0, reconnects: 0, probeFailures: 0 };
  readonly capabilities: EngineCapabilities;
  readonly broker: RedisBroker;
  readonly history: RedisHistory;
  readonly presence: RedisPresence;
  readonly directory: RedisDirectory;
  readonly leases: RedisLeases;
  readonly handover: RedisHandover;
  /** @internal The cap on channels with history keys this node wrote. */
  readonly historyBound: RedisHistoryBound;
  /** @internal Probes of the subscriber connection (`redis-probe.ts`); not started on a Redis Cluster. */
  readonly probe: DeliveryProbe;
  /** @internal On a Redis Cluster, a probe per shard the node follows a channel on (`redis-shard-probes.ts`). */
  readonly shardProbes: ShardProbes | null;
  /** @internal Key and topic names. */
  readonly keys: RedisKeys;
  /** @internal The command connection (set by `start`). */
  cmd: RedisClient | null = null;
  /** @internal The subscriber connection (set by `start`). */
  sub: RedisClient | null = null;
  /** @internal Live node ids as of the latest heartbeat. */
  live = new Set<string>();
  private state: EngineState = 'new';
  private self: EngineNode | null = null;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<Set<string>> | null = null;
  /** Until when nodes known before a reconnect count as alive without a fresh heartbeat. */
  private graceUntil = 0;
  /** Whether this node's first heartbeat is done (its joining the live set is no return). */
  private beaten = false;
  /** Whether both connections were up at the last change told to the node. */
  private connected = false;
  /** The connections' latest error since then: the reason given when they go down. */
  private lastError: string | null = null;
  /** The pub/sub name of this node's probes (set by `start`). */
  private probeTopic = '';
  /**
   * Whether the subscriber connection's outage under way may have cost messages that went
   * through Redis meanwhile: its probe found it silent, or it dropped while the command
   * connection (and so Redis) stayed up. `null` while the subscriber is connected. A Redis
   * that went away as a whole took every publish with it: nothing went through to miss.
   */
  private subOutageMissable: boolean | null = null;
  private silenced = false;
  /** @internal A name's pub/sub name is followed now, or no longer: the shard probes count them. */
  readonly followed = (topic: string, yes: boolean): void => this.shardProbes?.followed(topic, yes);

  constructor(options: RedisEngineOptions = {}) {
    this.options = resolveRedisOptions(options);
    this.capabilities = Object.freeze({ multiNode: true, backend: describeRedis(this.options) });
    this.keys = new RedisKeys(this.options.keyPrefix);
    this.broker = new RedisBroker(this);
    this.history = new RedisHistory(this);
    this.presence = new RedisPresence(this);
    this.directory = new RedisDirectory(this);
    this.leases = new RedisLeases(this);
    this.handover = new RedisHandover(this);
    this.historyBound = new RedisHistoryBound(this);
    this.probe = new DeliveryProbe(this.probeHost(), this.options.probeIntervalMs);
    this.shardProbes =
      this.options.cluster === null
        ? null
        : new ShardProbes(this.shardProbeHost(), this.options.probeIntervalMs);
  }

  /** The channels whose history keys this node wrote and still counts, and what it dropped. */
  historyStats(): HistoryStats {
    return this.historyBound.stats();
  }

  connectionStats(): EngineConnectionStats {
    return { reconnects: this.stats.reconnects };
  }

  /** @internal The node this engine serves; throws before `start` and after `close`. */
  node(): EngineNode {
    if (this.state !== 'started' || this.self === null) throw new Error('Redis engine is not started');
    return this.self;
  }

  /** @internal The command connection of a started engine. */
  commands(): RedisClient {
    this.node();
    return this.cmd as RedisClient;
  }

  async start(node: EngineNode): Promise<void> {
    if (this.state !== 'new') throw new Error(`Redis engine cannot start: it is ${this.state}`);
    if (typeof node.nodeId !== 'string' || !/^[^\s{}]+$/.test(node.nodeId)) {
      throw new TypeError(`node id must be a non-empty string without spaces or braces, got ${node.nodeId}`);
    }
    this.state = 'starting';
    this.self = node;
    this.cmd = createClient(this.options, `bayou:${node.nodeId}`);
    this.sub = createClient(this.options, `bayou:${node.nodeId}:sub`);
    this.probeTopic = this.keys.probe(node.nodeId);
    // A probe in flight when the connection drops is lost with it, not missed.
    this.sub.on('close', () => {
      this.probe.void();
      this.shardProbes?.void();
      // What arrives before the catch-up waits for it: ioredis resubscribes a Redis Cluster's
      // shard connections by itself, maybe before its `ready` starts the catch-up.
      if (this.state === 'started') this.broker.gate.hold();
      this.subOutageMissable ??= this.silenced || isReady(this.cmd as RedisClient);
    });
    this.cmd.on('close', () => {
      if (this.subOutageMissable !== null && !this.silenced) this.subOutageMissable = false;
    });
    this.watch(this.cmd, () => this.restore());
    this.watch(this.sub, () => {
      // Only an outage that may have cost messages reports what history cannot fill in.
      const report = this.subOutageMissable === true || this.silenced;
      this.subOutageMissable = null;
      this.silenced = false;
      const done = () => dedupeShardChannels(this.sub as RedisClient);
      return this.broker.resubscribe(true, report).finally(done);
    });
    this.sub.on('message', (topic: string, message: string) => this.receive(topic, message));
    this.sub.on('smessage', (topic: string, message: string) => this.receive(topic, message));
    this.shardProbes?.watch(this.sub as Cluster, () => this.connectionsUp());
    try {
      await Promise.all([connect(this.cmd), connect(this.sub)]);
      this.state = 'started';
      this.connected = true;
      await this.broker.resubscribe();
      await this.heartbeat();
    } catch (err) {
      this.disconnect();
      throw err;
    }
    this.timer = setInterval(() => {
      this.historyBound.sweep(Date.now());
      void this.heartbeat().catch(() => undefined);
    }, this.options.heartbeatMs);
    this.timer.unref();
    if (this.shardProbes !== null) this.shardProbes.start();
    else this.probe.start();
  }

  /** Whether both connections are up and the latest delivery probe came back. */
  ready(): boolean {
    return this.connectionsUp() && this.probe.healthy() && (this.shardProbes?.healthy() ?? true);
  }

  /** Whether both connections are up (what `connectionChanged` tells the node about). */
  private connectionsUp(): boolean {
    return (
      this.state === 'started' &&
      this.cmd !== null &&
      isReady(this.cmd) &&
      this.sub !== null &&
      isReady(this.sub)
    );
  }

  /** Leaves the cluster: removes this node's counts, members, leases and liveness, then disconnects. */
  async close(): Promise<void> {
    if (this.state !== 'started') {
      this.stop();
      return;
    }
    const cmd = this.cmd as RedisClient;
    const nodeId = this.node().nodeId;
    if (isReady(cmd)) {
      await Promise.allSettled([
        this.presence.clear(),
        this.leases.releaseAll(),
        cmd.zrem(this.keys.nodes, nodeId),
      ]);
    }
    const sub = this.sub as RedisClient;
    this.stop();
    if (isReady(cmd)) await cmd.quit().catch(() => undefined);
    if (isReady(sub)) await sub.quit().catch(() => undefined);
    cmd.disconnect();
    sub.disconnect();
  }

  /**
   * Drops both connections at once without a goodbye, as a killed process would: the
   * node's counts, members and leases stay in Redis until its liveness expires. For
   * failover tests; `close` is the way to leave.
   */
  disconnect(): void {
    const { cmd, sub } = this;
    this.stop();
    cmd?.disconnect();
    sub?.disconnect();
  }

  /** @internal Counts a failed call; hands back the promise. */
  track<T>(promise: Promise<T>): Promise<T> {
    return promise.catch((err: unknown) => {
      this.stats.errors++;
      throw err;
    });
  }

  /**
   * @internal Refreshes this node's liveness and the live-node list; concurrent callers
   * share one round trip.
   */
  heartbeat(): Promise<Set<string>> {
    if (this.beating !== null) return this.beating;
    const beat = this.beat().finally(() => {
      this.beating = null;
    });
    this.beating = beat;
    return beat;
  }

  private async beat(): Promise<Set<string>> {
    const args = [this.node().nodeId, this.options.nodeTtlMs];
    const [ids, dead, added] = (await this.track(
      runScript(this.commands(), HEARTBEAT, [this.keys.nodes], args),
    )) as [string[], string[], number];
    const live = new Set(ids);
    // The script removed these from the live set: no other node saw them go, so this one
    // reports their members left (once in the cluster).
    for (const id of dead) if (id !== this.self?.nodeId) void this.presence.reap(id).catch(() => undefined);
    // Back in the live set after the others took this node for dead (a stall longer than
    // nodeTtlMs): its members were reported left and removed; write them again and say so.
    // Not after a Redis restart (the grace period), where nobody reported anything.
    if (added === 1 && this.beaten && Date.now() >= this.graceUntil)
      void this.revive().catch(() => undefined);
    this.beaten = true;
    // Just after an outage the other nodes may not have sent their first heartbeat yet
    // (or Redis lost them all): do not take them for dead before they had the time to.
    if (Date.now() < this.graceUntil) for (const id of this.live) live.add(id);
    this.live = live;
    return live;
  }

  private stop(): void {
    this.state = 'closed';
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.probe.stop();
    this.shardProbes?.stop();
    this.broker.abandon();
    this.self = null;
  }

  private watch(client: RedisClient, onReconnect: () => Promise<unknown>): void {
    let connected = false;
    client.on('error', (err: Error) => {
      this.stats.errors++;
      this.lastError = err.message;
    });
    client.on('close', () => this.connectionChanged());
    // ioredis gives up for good when its connector fails (a Sentinel that cannot name a
    // primary for a moment during a failover): the connection ends, and nothing would ever
    // open it again. A started engine opens it again, once a second until it answers.
    client.on('end', () => this.reopen(client));
    client.on('ready', () => {
      if (connected && this.state === 'started') {
        this.stats.reconnects++;
        void onReconnect().catch(() => undefined);
      }
      connected = true;
      this.connectionChanged();
    });
  }

  /** Tells the node once when both connections are up again after either went down, and back. */
  private connectionChanged(): void {
    if (this.state !== 'started') return;
    const up = this.connectionsUp();
    if (up === this.connected) return;
    this.connected = up;
    const where = describeRedis(this.options);
    const reason = this.lastError ?? 'connection closed';
    this.lastError = null;
    this.self?.connectionChanged?.(up ? { up, where } : { up, where, reason });
  }

  /**
   * What the probes need: a probe goes while the subscriber connection is up and caught up
   * and the node follows a channel (or must learn whether the connection works again).
   */
  private probeHost(): ProbeHost {
    return {
      probing: () =>
        this.state === 'started' &&
        this.broker.probeable() &&
        (this.broker.following() || !this.probe.healthy()),
      send: (nonce) => {
        const cmd = this.commands();
        return this.track(
          this.options.sharded ? cmd.spublish(this.probeTopic, nonce) : cmd.publish(this.probeTopic, nonce),
        );
      },
      reconnect: () => {
        this.stats.probeFailures++;
        this.resync();
      },
      notice: (level, message) => this.self?.notice?.(level, message),
    };
  }

  /** Drops the subscriber connection(s): the reconnect resubscribes, catches up and tells gaps. */
  private resync(): void {
    this.silenced = true;
    const sub = this.sub;
    if (sub === null) return;
    // Destroyed, not ended: a silent peer may never answer a FIN, and ioredis reconnects on close.
    const stream = this.options.cluster === null ? (sub as Redis).stream : undefined;
    if (stream !== undefined) stream.destroy();
    else sub.disconnect(true);
  }

  /** The shard probes' needs: as `probeHost`'s, on the probe names of each shard followed. */
  private shardProbeHost(): ShardProbeHost {
    const { reconnect, notice } = this.probeHost();
    return {
      probing: () => this.state === 'started' && this.broker.probeable(),
      masterOf: (slot) => (this.sub as Cluster | null)?.slots[slot]?.[0],
      topic: (k) => this.keys.shardProbe(this.node().nodeId, k),
      subscribe: (topic) => this.track((this.sub as Cluster).ssubscribe(topic)),
      unsubscribe: (topic) => this.track((this.sub as Cluster).sunsubscribe(topic)),
      send: (topic, nonce) => this.track(this.commands().spublish(topic, nonce)),
      reconnect,
      resync: () => this.resync(),
      notice,
    };
  }

  /** Opens `client` again a second after ioredis ended it, unless the engine stopped meanwhile. */
  private reopen(client: RedisClient): void {
    if (this.state !== 'started') return;
    const timer = setTimeout(() => {
      if (this.state === 'started' && client.status === 'end') client.connect().catch(() => undefined);
    }, 1000);
    timer.unref();
  }

  /** This node was taken for dead and is alive again: its members join again. */
  private async revive(): Promise<void> {
    const members = await this.presence.rejoin();
    if (members.length > 0) this.self?.membersRestored?.(members);
  }

  /** After Redis came back (maybe empty): be alive again and put back what this node holds. */
  private async restore(): Promise<void> {
    this.graceUntil = Date.now() + this.options.nodeTtlMs;
    void this.broker.recheck().catch(() => undefined);
    await this.heartbeat();
    await this.presence.restore();
  }

  private receive(topic: string, message: string): void {
    if (this.state !== 'started') return;
    if (topic === this.probeTopic) this.probe.received(message);
    else if (this.shardProbes === null || !this.shardProbes.received(topic, message))
      this.broker.receive(topic, message);
  }
}
