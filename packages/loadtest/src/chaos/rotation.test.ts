import { describe, expect, it } from 'vitest';
import { clientPlan } from './cluster-chaos.js';
import type { WorkerResult } from './cluster-messages.js';
import { nodeEnv } from './cluster-processes.js';
import { probeShare, workerShare } from './cluster-workers.js';
import { Rotation } from './rotation.js';
import { drainSpreadOf, receivingAgain, stormReport } from './storm.js';

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

describe("the storm's probe", () => {
  it('takes the first pair of each stride: both transports of a mixed plan, 4% of 10,000, none under 40', () => {
    const plan = clientPlan({
      clients: 10_000,
      rooms: 100,
      roomsPerClient: 1,
      seed: 1,
      transport: 'mixed',
    } as Parameters<typeof clientPlan>[0]);
    const { probe, rest } = probeShare(plan, 4);
    expect(probe).toHaveLength(400);
    expect(probe.filter((c) => c.transport === 'websocket')).toHaveLength(200);
    expect(rest).toHaveLength(9600);
    expect(new Set([...probe, ...rest].map((c) => c.index)).size).toBe(10_000);
    expect(probeShare(plan.slice(0, 40), 4).probe).toHaveLength(20);
    expect(probeShare(plan.slice(0, 39), 4).probe).toHaveLength(0);
    expect(probeShare(plan, 0).probe).toHaveLength(0);
  });

  it("gives the stayers' p99 of the probe when there is one, every stayer's beside it", () => {
    const at = 100_000;
    const part = (probe: boolean, quietMs: number, stormMs: number, delay: number): WorkerResult =>
      ({
        probe,
        stayerLatency: [
          [(at - 5000) / 100, quietMs, 100],
          [(at + 500) / 100, stormMs, 100],
        ],
        handshakes: [],
        reconnections: probe ? [] : [1200, 900, 1500],
        loopDelay: [
          [(at - 5000) / 1000, 10],
          [at / 1000, delay],
        ],
      }) as unknown as WorkerResult;
    const r = stormReport([part(false, 80, 3000, 900), part(true, 50, 90, 40)], 'drain', at, 0, [2000], 0);
    expect({ quiet: r.quietP99, storm: r.stormP99, probe: r.probe }).toEqual({
      quiet: 50,
      storm: 90,
      probe: true,
    });
    expect(r.allStayers).toEqual({ quietP99: 80, stormP99: 3000 });
    // Per second from the signal, the probe's (the loaded workers' 3 s is not in it).
    expect(r.signalAt).toBe(at);
    expect(r.connectedAgain).toEqual({ count: 3, p99Ms: 1500, maxMs: 1500 });
    expect(r.bySecond).toEqual([
      { t: -5, p99: 50, n: 100 },
      { t: 0, p99: 90, n: 100 },
    ]);
    expect(r.targets.stayersP99).toBe(true);
    expect(r.loopDelay).toEqual({ loaded: { quiet: 10, storm: 900 }, probe: { quiet: 10, storm: 40 } });
    const without = stormReport([part(false, 80, 3000, 900)], 'drain', at, 0, [2000], 0);
    expect({ storm: without.stormP99, probe: without.probe, loop: without.loopDelay.probe }).toEqual({
      storm: 3000,
      probe: false,
      loop: null,
    });
  });
});

describe('a moved client receiving again', () => {
  it('on a new session, or on its own handed-over one with a message published after its connection was cut', () => {
    // Its draining node still serves it: a message published after the signal is not "back".
    expect(receivingAgain('n0.a', 'n0.a', 6000, 5000)).toBe(false);
    expect(receivingAgain('n0.a', 'n0.a', 6000, 6001)).toBe(true);
    expect(receivingAgain('n1.b', 'n0.a', 0, 1)).toBe(true);
    expect(receivingAgain(null, 'n0.a', 6000, 7000)).toBe(false);
  });
});
