/**
 * Cluster-wide subscriber counts and member lists. Each channel has a hash of per-node
 * counts and a hash of members (each tagged with its node); readers count only entries of
 * live nodes and delete those of dead ones, so a node's presence expires with its
 * liveness. Nothing is kept per plain subscription: one field per node per channel.
 * The node keeps what it wrote, to remove it on close and to write it again after Redis
 * lost it (a restart without persistence). It also indexes its members under its own key,
 * so that the node whose heartbeat finds it dead can report each of them left, once.
 */
import type { LostMember, Presence, PresenceMember } from '../engine.js';
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

  reclaim(): Promise<string[]> {
    return this.occupancy.reclaim();
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
    const value = memberValue(nodeId, member);
    // The channel's list for readers, the node's index for whoever finds this node dead.
    // Two commands, not one transaction: on a Redis Cluster the keys sit on two shards.
    const cmd = e.commands();
    await e.track(
      Promise.all([
        cmd.hset(e.keys.members(channel), member.clientId, value),
        cmd.hset(e.keys.nodePresence(nodeId), indexField(channel, member.clientId), value),
      ]),
    );
    let byClient = this.joined.get(channel);
    if (byClient === undefined) {
      byClient = new Map();
      this.joined.set(channel, byClient);
    }
    byClient.set(member.clientId, member);
  }

  async leave(channel: string, clientId: string): Promise<void> {
    const e = this.engine;
    const cmd = e.commands();
    await e.track(
      Promise.all([
        cmd.hdel(e.keys.members(channel), clientId),
        cmd.hdel(e.keys.nodePresence(e.node().nodeId), indexField(channel, clientId)),
      ]),
    );
    const byClient = this.joined.get(channel);
    byClient?.delete(clientId);
    if (byClient?.size === 0) this.joined.delete(channel);
  }

  /**
   * @internal `nodeId` was found dead by this node's heartbeat (and by no other): its
   * members leave every channel's list and the node is told, once, who they were.
   */
  async reap(nodeId: string): Promise<void> {
    const e = this.engine;
    const cmd = e.commands();
    const index = e.keys.nodePresence(nodeId);
    const hash = await e.track(cmd.hgetall(index));
    const lost: LostMember[] = [];
    const done: Promise<unknown>[] = [cmd.del(index)];
    for (const [field, value] of Object.entries(hash)) {
      const cut = field.indexOf(' ');
      const clientId = field.slice(0, cut);
      const channel = field.slice(cut + 1);
      lost.push({ channel, member: parseMember(clientId, value).member });
      done.push(cmd.hdel(e.keys.members(channel), clientId));
    }
    await e.track(Promise.all(done));
    if (lost.length > 0) e.node().membersLost?.(lost);
  }

  async members(channel: string): Promise<PresenceMember[]> {
    const e = this.engine;
    const key = e.keys.members(channel);
    const hash = await e.track(e.commands().hgetall(key));
    const entries = Object.entries(hash).map(([clientId, v]) => parseMember(clientId, v));
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
    done.push(cmd.del(e.keys.nodePresence(nodeId)));
    this.counts.clear();
    this.joined.clear();
    await e.track(Promise.all(done));
  }

  /**
   * @internal This node was taken for dead (its members reaped): writes everything again
   * and returns its members, to be announced as joined again.
   */
  async rejoin(): Promise<LostMember[]> {
    // Occupancy is left to its own reclaim, which looks at what the sweeper removed.
    await this.engine.track(Promise.all(this.rewrite()));
    return [...this.joined].flatMap(([channel, byClient]) =>
      [...byClient.values()].map((member) => ({ channel, member })),
    );
  }

  /** @internal Writes this node's counts and members again (Redis may have lost them). */
  async restore(): Promise<void> {
    await this.engine.track(Promise.all([...this.rewrite(), ...this.occupancy.restore()]));
  }

  /** The writes that put this node's counts, members and member index back. */
  private rewrite(): Promise<unknown>[] {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    const done: Promise<unknown>[] = [];
    for (const [channel, count] of this.counts) done.push(cmd.hset(e.keys.counts(channel), nodeId, count));
    for (const [channel, byClient] of this.joined) {
      const values = [...byClient.values()].flatMap((m) => [m.clientId, memberValue(nodeId, m)]);
      done.push(cmd.hset(e.keys.members(channel), ...values));
      const indexed = [...byClient.values()].flatMap((m) => [
        indexField(channel, m.clientId),
        memberValue(nodeId, m),
      ]);
      done.push(cmd.hset(e.keys.nodePresence(nodeId), ...indexed));
    }
    return done;
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

/** How a member is stored: its node, then its info (or null) and user when it has them. */
function memberValue(nodeId: string, member: PresenceMember): string {
  if (member.user !== undefined) return JSON.stringify([nodeId, member.info ?? null, member.user]);
  return JSON.stringify(member.info === undefined ? [nodeId] : [nodeId, member.info]);
}

function parseMember(clientId: string, value: string): { nodeId: string; member: PresenceMember } {
  const [nodeId, info, user] = JSON.parse(value) as [string, (Record<string, unknown> | null)?, string?];
  const member: { clientId: string; user?: string; info?: Record<string, unknown> } = { clientId };
  if (typeof user === 'string') member.user = user;
  if (info !== undefined && info !== null) member.info = info;
  return { nodeId, member };
}

/** A field of a node's presence index; clientIds hold no space, so the first one splits it. */
function indexField(channel: string, clientId: string): string {
  return `${clientId} ${channel}`;
}

/** The results of a pipeline, or its first error. */
function unwrap(results: [Error | null, unknown][] | null): unknown[] {
  if (results === null) throw new Error('Redis pipeline was aborted');
  for (const [err] of results) if (err !== null) throw err;
  return results.map(([, value]) => value);
}
