import { describe, expect, it } from 'vitest';
import { clientPlan } from './cluster-chaos.js';
import { nodeEnv } from './cluster-processes.js';
import { workerShare } from './cluster-workers.js';
import { Rotation } from './rotation.js';
import { drainSpreadOf, stormReport } from './storm.js';

describe('the chaos balancer rotation', () => {
  it('takes the nodes in turn', () => {
    const r = new Rotation([1, 2, 3]);
    expect([1, 2, 3, 4, 5, 6].map(() => r.pick(new Set()))).toEqual([1, 2, 3, 1, 2, 3]);
  });

  it('passes over a node that is not ready, and takes it again once ready', () => {
    const r = new Rotation([1, 2, 3]);
    r.ready(1, false);
    const picks = Array.from({ length: 6 }, () => r.pick(new Set()));
    expect(picks).not.toContain(1);
    expect(new Set(picks)).toEqual(new Set([2, 3]));
    r.ready(1, true);
    expect(Array.from({ length: 3 }, () => r.pick(new Set()))).toContain(1);
  });

  it('passes over a refused node for a second, and a node already tried for this request', () => {
    const r = new Rotation([1, 2]);
    r.refused(1, 1000);
    expect(r.pick(new Set(), 1500)).toBe(2);
    expect(r.pick(new Set(), 1500)).toBe(2);
    expect(r.pick(new Set([2]), 1500)).toBe(1); // none fit: tried anyway
    expect(r.pick(new Set([1, 2]), 1500)).toBeNull();
    expect([r.pick(new Set(), 2000), r.pick(new Set(), 2000)].sort()).toEqual([1, 2]);
  });

  it('still picks a node when none is ready', () => {
    const r = new Rotation([1, 2]);
    r.ready(1, false);
    r.ready(2, false);
    expect(r.pick(new Set())).not.toBeNull();
  });
});

describe('the client workers share', () => {
  it('gives every worker both transports of a mixed plan, each client once', () => {
    const plan = clientPlan({
      clients: 1000,
      rooms: 10,
      roomsPerClient: 1,
      seed: 1,
      transport: 'mixed',
    } as Parameters<typeof clientPlan>[0]);
    const shares = Array.from({ length: 4 }, (_, w) => workerShare(plan, 4, w));
    for (const share of shares) {
      const ws = share.filter((c) => c.transport === 'websocket').length;
      expect(ws).toBe(share.length - ws);
    }
    expect(shares.flat().map((c) => c.index)).toEqual(plan.map((c) => c.index));
  });

  it('leaves no worker empty while there are as many clients as workers', () => {
    const plan = [1, 2, 3, 4, 5];
    expect([0, 1, 2, 3].map((w) => workerShare(plan, 4, w).length).every((n) => n > 0)).toBe(true);
  });
});

describe('a chaos node environment', () => {
  it("passes the storm's server settings on, and no other BAYOU_ variable or PORT", () => {
    const env = nodeEnv({
      PATH: '/bin',
      PORT: '80',
      BAYOU_PORT: '1',
      BAYOU_REDIS: 'redis://elsewhere',
      BAYOU_DRAIN_SPREAD: '0',
      BAYOU_MAX_HANDSHAKE_RATE: '0',
      BAYOU_SHUTDOWN_TIMEOUT: '30000',
    });
    expect(env).toEqual({
      PATH: '/bin',
      BAYOU_DRAIN_SPREAD: '0',
      BAYOU_MAX_HANDSHAKE_RATE: '0',
      BAYOU_SHUTDOWN_TIMEOUT: '30000',
    });
  });
});

describe("the storm's wait target", () => {
  it("follows the nodes' drainSpread as the run passes it on", () => {
    expect(drainSpreadOf({})).toBe(5000);
    expect(drainSpreadOf({ BAYOU_DRAIN_SPREAD: '0' })).toBe(0);
    expect(drainSpreadOf({ BAYOU_DRAIN_SPREAD: '20s' })).toBe(20_000);
    const back = (ms: number, spread: number) =>
      stormReport([], 'drain', 1000, 0, [ms], 0, spread).targets.longestWait;
    expect(back(9000, 5000)).toBe(true);
    expect(back(11_000, 5000)).toBe(false);
    expect(back(11_000, 20_000)).toBe(true);
  });
});
