/**
 * Sessions handed over on Redis (issue #35): a draining node writes each session's record
 * under `{session:<clientId>}:handover` with a TTL; the node a client reconnects to claims
 * it with one script — the record read and deleted, the adopter written under
 * `{session:<clientId>}:owner` — so two nodes cannot both adopt it, and a third that gets a
 * request for the session later finds the adopter and forwards there. A direct message for
 * the session is appended to `{session:<clientId>}:mail`, and the node holding the session
 * is rung to take it; while a record waits, the claim takes the mail with it. Each message
 * is taken once — by the node that held the session, or with the record — whichever way a
 * handover races it. All the keys share a hash tag: on a Redis Cluster each script touches
 * one slot.
 */
import type { HandoverClaim, SessionHandover } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import { CLAIM_SESSION, RELEASE, ROUTE_DIRECT, runScript, TAKE_MAIL } from './redis-scripts.js';

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

  async route(clientId: string, message: string, ttlMs: number): Promise<'kept' | { owner: string } | null> {
    const e = this.engine;
    const keys = [e.keys.handover(clientId), e.keys.sessionOwner(clientId), e.keys.sessionMail(clientId)];
    const args = [message, MAX_MAIL, Math.max(1, Math.round(ttlMs))];
    const answer = (await e.track(runScript(e.commands(), ROUTE_DIRECT, keys, args))) as [number, string?];
    if (answer[0] === 1) return 'kept';
    if (answer[0] === 2) return { owner: String(answer[1]) };
    return null;
  }

  async takeMail(clientId: string): Promise<string[]> {
    const e = this.engine;
    const mail = (await e.track(runScript(e.commands(), TAKE_MAIL, [e.keys.sessionMail(clientId)], []))) as
      | string[]
      | null;
    return (mail ?? []).map(String);
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
