/**
 * Leases on Redis: `SET NX PX` semantics in a script that also treats the lease of a dead
 * node as free, so a provider moves as soon as its node's liveness expires; renew and
 * release compare the holder first, so only the owner can touch its lease.
 */
import type { Leases } from '../engine.js';
import type { RedisCore } from './redis-core.js';
import { ACQUIRE, RELEASE, RENEW, runScript } from './redis-scripts.js';

export class RedisLeases implements Leases {
  /** Leases this node took, to release them when it leaves. */
  private readonly held = new Set<string>();

  constructor(private readonly engine: RedisCore) {}

  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const e = this.engine;
    checkTtl(ttlMs);
    const nodeId = e.node().nodeId;
    const got =
      (await e.track(
        runScript(e.commands(), ACQUIRE, [e.keys.lease(name), e.keys.nodes], [nodeId, ttlMs]),
      )) === 1;
    if (got) this.held.add(name);
    return got;
  }

  async renew(name: string, ttlMs: number): Promise<boolean> {
    const e = this.engine;
    checkTtl(ttlMs);
    const nodeId = e.node().nodeId;
    const kept = (await e.track(runScript(e.commands(), RENEW, [e.keys.lease(name)], [nodeId, ttlMs]))) === 1;
    if (!kept) this.held.delete(name);
    return kept;
  }

  async release(name: string): Promise<void> {
    const e = this.engine;
    const nodeId = e.node().nodeId;
    await e.track(runScript(e.commands(), RELEASE, [e.keys.lease(name)], [nodeId]));
    this.held.delete(name);
  }

  /** @internal Lets go of every lease this node holds (it leaves the cluster). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.held].map((name) => this.release(name)));
  }
}

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new TypeError(`lease ttlMs must be a positive integer, got ${ttlMs}`);
}
