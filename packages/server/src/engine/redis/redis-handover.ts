/**
 * Sessions handed over on Redis (issue #35): a draining node writes each session's record
 * under `{session:<clientId>}:handover` with a TTL; the node a client reconnects to claims
 * it with one script — the record read and deleted, the adopter written under
 * `{session:<clientId>}:owner` — so two nodes cannot both adopt it, and a third that gets a
 * request for the session later finds the adopter and forwards there. Both keys share a
 * hash tag: on a Redis Cluster the claim touches one slot.
 */
import type { SessionHandover } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import { CLAIM_SESSION, RELEASE, runScript } from './redis-scripts.js';

export class RedisHandover implements SessionHandover {
  constructor(private readonly engine: RedisCore) {}

  async put(clientId: string, record: string, ttlMs: number): Promise<void> {
    const e = this.engine;
    await e.track(e.commands().set(e.keys.handover(clientId), record, 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async claim(clientId: string, ownerTtlMs: number): Promise<{ record: string } | { owner: string } | null> {
    const e = this.engine;
    const keys = [e.keys.handover(clientId), e.keys.sessionOwner(clientId)];
    const args = [e.node().nodeId, Math.max(1, Math.round(ownerTtlMs))];
    const answer = (await e.track(runScript(e.commands(), CLAIM_SESSION, keys, args))) as [number, string?];
    if (answer[0] === 1) return { record: String(answer[1]) };
    if (answer[0] === 2) return { owner: String(answer[1]) };
    return null;
  }

  async release(clientId: string): Promise<void> {
    const e = this.engine;
    await e.track(runScript(e.commands(), RELEASE, [e.keys.sessionOwner(clientId)], [e.node().nodeId]));
  }
}
