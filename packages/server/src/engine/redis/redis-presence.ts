/**
 * Cluster-wide subscriber counts and member lists. Each channel has a hash of per-node
 * counts and a hash of members (each tagged with its node); readers count only entries of
 * live nodes and delete those of dead ones, so a node's presence expires with its
 * liveness. Nothing is kept per plain subscription: one field per node per channel.
 * The node keeps what it wrote, to remove it on close and to write it again after Redis
 * lost it (a restart without persistence).
 */
import type { Presence, PresenceMember } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import { RedisOccupancy } from './redis-occupancy.js';

export class RedisPresence implements Presence {
  /** channel → this node's count. */
  private readonly counts = new Map<string, number>();
  /** channel → clientId → member, for members joined through this node. */
  private readonly joined = new Map<string, Map<string, PresenceMember>>();

  private readonly occupancy: RedisOccupancy;

  constructor(private readonly engine: RedisCore) {
    this.occupancy = new RedisOccupancy(engine);
  }

  occupy(channel: string): Promise<boolean> {
    return this.occupancy.occupy(channel);
  }

  vacate(channel: string): Promise<boolean> {
    return this.occupancy.vacate(channel);
  }

  vacateDead(): Promise<string[]> {
    return this.occupancy.vacateDead();
  }

  async setCount(channel: string, count: number): Promise<number> {
    if (!Number.isSafeInteger(count) || count < 0)
      throw new TypeError(`count must be a whole number, got ${count}`);
    const e = this.engine;
    const nodeId = e.node().nodeId;
    const key = e.keys.counts(channel);
    const pipeline = e.commands().pipeline();
    if (count > 0) pipeline.hset(key, nodeId, count);
    else pipeline.hdel(key, nodeId);
    pipeline.hgetall(key);
    const results = await e.track(pipeline.exec().then(unwrap));
    if (count > 0) this.counts.set(channel, count);
    else this.counts.delete(channel);
    return this.sum(key, results[1] as Record<string, string>);
  }

  async count(channel: string): Promise<number> {
    const e = this.engine;
    const key = e.keys.counts(channel);
    return this.sum(key, await e.track(e.commands().hgetall(key)));
  }

  async join(channel: string, member: PresenceMember): Promise<void> {
    const e = this.engine;
    const nodeId = e.node().nodeId;
    await e.track(e.commands().hset(e.keys.members(channel), member.clientId, memberValue(nodeId, member)));
    let byClient = this.joined.get(channel);
    if (byClient === undefined) {
      byClient = new Map();
      this.joined.set(channel, byClient);
    }
    byClient.set(member.clientId, member);
  }

  async leave(channel: string, clientId: string): Promise<void> {
    const e = this.engine;
    await e.track(e.commands().hdel(e.keys.members(channel), clientId));
    const byClient = this.joined.get(channel);
    byClient?.delete(clientId);
    if (byClient?.size === 0) this.joined.delete(channel);
  }

  async members(channel: string): Promise<PresenceMember[]> {
    const e = this.engine;
    const key = e.keys.members(channel);
    const hash = await e.track(e.commands().hgetall(key));
    const entries = Object.entries(hash).map(([clientId, v]) => {
      const [nodeId, info] = JSON.parse(v) as [string, Record<string, unknown>?];
      return { nodeId, member: info === undefined ? { clientId } : { clientId, info } };
    });
    const live = await this.liveAmong(
      key,
      entries.map((x) => [x.member.clientId, x.nodeId]),
    );
    return entries.filter((x) => live.has(x.nodeId)).map((x) => x.member);
  }

  /** @internal Removes everything this node wrote (it leaves the cluster). */
  async clear(): Promise<void> {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    // One command per key (not a pipeline): on a Redis Cluster the keys sit on several shards.
    const done: Promise<unknown>[] = [];
    for (const channel of this.counts.keys()) done.push(cmd.hdel(e.keys.counts(channel), nodeId));
    for (const [channel, byClient] of this.joined)
      done.push(cmd.hdel(e.keys.members(channel), ...byClient.keys()));
    done.push(...this.occupancy.clear());
    this.counts.clear();
    this.joined.clear();
    await e.track(Promise.all(done));
  }

  /** @internal Writes this node's counts and members again (Redis may have lost them). */
  async restore(): Promise<void> {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    const done: Promise<unknown>[] = [];
    for (const [channel, count] of this.counts) done.push(cmd.hset(e.keys.counts(channel), nodeId, count));
    for (const [channel, byClient] of this.joined) {
      const values = [...byClient.values()].flatMap((m) => [m.clientId, memberValue(nodeId, m)]);
      done.push(cmd.hset(e.keys.members(channel), ...values));
    }
    done.push(...this.occupancy.restore());
    await e.track(Promise.all(done));
  }

  private async sum(key: string, hash: Record<string, string>): Promise<number> {
    const entries = Object.entries(hash);
    const live = await this.liveAmong(
      key,
      entries.map(([nodeId]) => [nodeId, nodeId]),
    );
    let total = 0;
    for (const [nodeId, n] of entries) if (live.has(nodeId)) total += Number(n);
    return total;
  }

  /**
   * The live nodes among `fields` ([hash field, its node]); fields of dead nodes are deleted.
   * A node missing from the cached list may have joined since: the list is read again first.
   */
  private async liveAmong(key: string, fields: [string, string][]): Promise<Set<string>> {
    const e = this.engine;
    let live = e.live;
    if (fields.some(([, nodeId]) => !live.has(nodeId))) live = await e.heartbeat();
    const dead = fields.filter(([, nodeId]) => !live.has(nodeId)).map(([field]) => field);
    if (dead.length > 0) void e.track(e.commands().hdel(key, ...dead)).catch(() => undefined);
    return live;
  }
}

/** How a member is stored: its node, then its info when it has one. */
function memberValue(nodeId: string, member: PresenceMember): string {
  return JSON.stringify(member.info === undefined ? [nodeId] : [nodeId, member.info]);
}

/** The results of a pipeline, or its first error. */
function unwrap(results: [Error | null, unknown][] | null): unknown[] {
  if (results === null) throw new Error('Redis pipeline was aborted');
  for (const [err] of results) if (err !== null) throw err;
  return results.map(([, value]) => value);
}
