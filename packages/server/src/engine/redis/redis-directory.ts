/**
 * The session directory on Redis: live nodes are the members of a sorted set scored by
 * when their heartbeat expires (`redis-engine.ts` beats). Requests between nodes do not
 * pass here: they travel over the broker (`kernel/node-link.ts`).
 */
import type { SessionDirectory } from '../engine.js';
import type { RedisCore } from './redis-core.js';

export class RedisDirectory implements SessionDirectory {
  /** Ids found dead, until the next heartbeat says otherwise. */
  private dead = new Set<string>();
  private deadAsOf: Set<string> | null = null;

  constructor(private readonly engine: RedisCore) {}

  /** Alive per the latest heartbeat (at most `heartbeatMs` old); an unknown id is looked up once. */
  isAlive(nodeId: string): boolean | Promise<boolean> {
    const e = this.engine;
    if (nodeId === e.node().nodeId || e.live.has(nodeId)) return true;
    if (this.deadAsOf !== e.live) {
      this.dead = new Set();
      this.deadAsOf = e.live;
    }
    if (this.dead.has(nodeId)) return false;
    return e.heartbeat().then((live) => {
      if (!live.has(nodeId)) this.dead.add(nodeId);
      return live.has(nodeId);
    });
  }

  async nodes(): Promise<string[]> {
    return [...(await this.engine.heartbeat())];
  }
}
