/**
 * Sessions handed over on Redis (issue #35): a draining node writes each session's record
 * under `{session:<clientId>}:handover` with a TTL; the node a client reconnects to claims
 * it with one script — the record read and deleted, the adopter written under
 * `{session:<clientId>}:owner` — so two nodes cannot both adopt it, and a third that gets a
 * request for the session later finds the adopter and forwards there. A direct message for
 * the session meanwhile is kept in `{session:<clientId>}:mail` (expiring with the record),
 * which the claim takes with it, or routed to the adopter: one script each, so a message
 * is either in the mail the adopter takes or sent after the adopter is named. All the keys
 * share a hash tag: on a Redis Cluster each script touches one slot.
 */
import type { HandoverClaim, SessionHandover } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import { CLAIM_SESSION, RELEASE, ROUTE_DIRECT, runScript } from './redis-scripts.js';

/** Most direct messages kept for one session while it waits to be claimed (the oldest dropped). */
export const MAX_MAIL = 1000;

export class RedisHandover implements SessionHandover {
  constructor(private readonly engine: RedisCore) {}

  async put(clientId: string, record: string, ttlMs: number): Promise<void> {
    const e = this.engine;
    await e.track(e.commands().set(e.keys.handover(clientId), record, 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async claim(clientId: string, ownerTtlMs: number): Promise<HandoverClaim | { owner: string } | null> {
    const e = this.engine;
    const keys = [e.keys.handover(clientId), e.keys.sessionOwner(clientId), e.keys.sessionMail(clientId)];
    const args = [e.node().nodeId, Math.max(1, Math.round(ownerTtlMs))];
    const answer = (await e.track(runScript(e.commands(), CLAIM_SESSION, keys, args))) as [
      number,
      string?,
      string[]?,
    ];
    if (answer[0] === 1) return { record: String(answer[1]), mail: (answer[2] ?? []).map(String) };
    if (answer[0] === 2) return { owner: String(answer[1]) };
    return null;
  }

  async route(clientId: string, message: string): Promise<'kept' | { owner: string } | null> {
    const e = this.engine;
    const keys = [e.keys.handover(clientId), e.keys.sessionOwner(clientId), e.keys.sessionMail(clientId)];
    const answer = (await e.track(runScript(e.commands(), ROUTE_DIRECT, keys, [message, MAX_MAIL]))) as [
      number,
      string?,
    ];
    if (answer[0] === 1) return 'kept';
    if (answer[0] === 2) return { owner: String(answer[1]) };
    return null;
  }

  async adopter(clientId: string): Promise<string | null> {
    const e = this.engine;
    return await e.track(e.commands().get(e.keys.sessionOwner(clientId)));
  }

  async release(clientId: string): Promise<void> {
    const e = this.engine;
    await e.track(runScript(e.commands(), RELEASE, [e.keys.sessionOwner(clientId)], [e.node().nodeId]));
  }
}
