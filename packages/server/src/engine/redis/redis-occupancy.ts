/**
 * Channel occupancy on Redis: a set per channel of the nodes that have subscribers of it.
 * Joining and leaving the set are Lua scripts that report whether the set was empty
 * before / is empty after, so exactly one node sees each cluster-wide transition. Each
 * node also lists its channels under its own key, so that when it dies without leaving,
 * any live node can take it out of those sets (`vacateDead`); the script again tells
 * which single caller emptied a set.
 */
import type { RedisCore } from './redis-core.js';
import { OCCUPY, runScript, VACATE } from './redis-scripts.js';

export class RedisOccupancy {
  /** The channels this node occupies, to leave them on close and to rewrite them after Redis lost them. */
  private readonly held = new Set<string>();

  constructor(private readonly engine: RedisCore) {}

  async occupy(channel: string): Promise<boolean> {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    // One round trip: the index is written first on the connection (a node dying between the
    // two leaves at worst an index entry the sweep ignores); the node joins `occupiers` when
    // it starts holding channels, not on every call.
    const steps: Promise<unknown>[] = [cmd.sadd(e.keys.occupies(nodeId), channel)];
    if (this.held.size === 0) steps.push(cmd.sadd(e.keys.occupiers, nodeId));
    this.held.add(channel);
    const first = runScript(cmd, OCCUPY, [e.keys.occupied(channel)], [nodeId]);
    const [transition] = await e.track(Promise.all([first, ...steps]));
    return transition === 1;
  }

  async vacate(channel: string): Promise<boolean> {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    this.held.delete(channel);
    const [last] = await e.track(
      Promise.all([
        runScript(cmd, VACATE, [e.keys.occupied(channel)], [nodeId]),
        cmd.srem(e.keys.occupies(nodeId), channel),
      ]),
    );
    return last === 1;
  }

  async vacateDead(): Promise<string[]> {
    const e = this.engine;
    const cmd = e.commands();
    const self = e.node().nodeId;
    const occupiers = await e.track(cmd.smembers(e.keys.occupiers));
    if (!occupiers.some((id) => id !== self && !e.live.has(id))) return [];
    // A fresh look before declaring anyone dead (the cached list may predate a new node).
    const live = await e.heartbeat();
    const vacated: string[] = [];
    for (const dead of occupiers.filter((id) => id !== self && !live.has(id))) {
      const channels = await e.track(cmd.smembers(e.keys.occupies(dead)));
      for (const channel of channels) {
        const last = await e.track(runScript(cmd, VACATE, [e.keys.occupied(channel)], [dead]));
        if (last === 1) vacated.push(channel);
      }
      await e.track(Promise.all([cmd.del(e.keys.occupies(dead)), cmd.srem(e.keys.occupiers, dead)]));
    }
    return vacated;
  }

  async reclaim(): Promise<string[]> {
    if (this.held.size === 0) return [];
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    // A sweeper that took this node for dead removed it from `occupiers` (and its channels).
    if ((await e.track(cmd.sismember(e.keys.occupiers, nodeId))) === 1) return [];
    const channels = [...this.held];
    const steps: Promise<unknown>[] = [
      cmd.sadd(e.keys.occupies(nodeId), ...channels),
      cmd.sadd(e.keys.occupiers, nodeId),
    ];
    const results = channels.map((c) => runScript(cmd, OCCUPY, [e.keys.occupied(c)], [nodeId]));
    await e.track(Promise.all(steps));
    const firsts = await e.track(Promise.all(results));
    return channels.filter((_, i) => firsts[i] === 1);
  }

  /** @internal Leaves every channel this node still occupies, silently (the node is closing). */
  clear(): Promise<unknown>[] {
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    const done: Promise<unknown>[] = [...this.held].map((c) => cmd.srem(e.keys.occupied(c), nodeId));
    done.push(cmd.del(e.keys.occupies(nodeId)), cmd.srem(e.keys.occupiers, nodeId));
    this.held.clear();
    return done;
  }

  /**
   * @internal Writes this node's channels again after Redis lost them. No event: to the
   * receivers these channels never stopped being occupied.
   */
  restore(): Promise<unknown>[] {
    if (this.held.size === 0) return [];
    const e = this.engine;
    const cmd = e.commands();
    const nodeId = e.node().nodeId;
    const done: Promise<unknown>[] = [...this.held].map((c) => cmd.sadd(e.keys.occupied(c), nodeId));
    done.push(cmd.sadd(e.keys.occupies(nodeId), ...this.held), cmd.sadd(e.keys.occupiers, nodeId));
    return done;
  }
}
