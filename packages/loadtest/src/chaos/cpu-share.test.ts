import { describe, expect, it } from 'vitest';
import { CpuShare, cpuBetween, roleOf } from './cpu-share.js';

describe("the storm's CPU share", () => {
  it('names the run processes by their command line', () => {
    expect(roleOf('node /x/dist/chaos/cluster-worker.js', false)).toBe('generator');
    expect(roleOf('node /x/dist/chaos/round-robin.js 2 1 2 3', false)).toBe('balancer');
    expect(roleOf('nginx: worker process', false)).toBe('balancer');
    expect(roleOf('/usr/bin/node /x/bin/bayou.js start --host 127.0.0.1 --port 9', false)).toBe('nodes');
    expect(roleOf('/usr/bin/redis-server 127.0.0.1:7000', false)).toBe('redis');
    expect(roleOf('node bayou-loadtest.js chaos', true)).toBe('publisher');
  });

  it('gives cores used between two samples: the machine, the run by role, the rest as other work', () => {
    const roles = new Map([
      [10, 'generator' as const],
      [11, 'generator' as const],
      [12, 'nodes' as const],
    ]);
    // 2 s on 2 cores = 400 ticks; 100 idle: 1.5 cores busy. The generator 150 ticks (0.75), the node 50 (0.25).
    const a = {
      t: 0,
      total: 1000,
      idle: 500,
      ticks: new Map([
        [10, 0],
        [11, 0],
        [12, 0],
      ]),
    };
    const b = {
      t: 2000,
      total: 1400,
      idle: 600,
      ticks: new Map([
        [10, 100],
        [11, 50],
        [12, 50],
        [13, 999],
      ]),
    };
    const w = cpuBetween(a, b, roles, 2);
    expect(w.machine).toBeCloseTo(1.5);
    expect(w.run).toBeCloseTo(1.0);
    expect(w.byRole).toEqual({ generator: 0.75, nodes: 0.25 });
    expect(w.others).toBeCloseTo(0.5);
  });

  it('samples this process on Linux, and nothing where /proc is not read', async () => {
    const share = new CpuShare();
    if (!CpuShare.available()) {
      expect(share.start(10).taken).toBe(0);
      return;
    }
    const from = Date.now();
    share.start(20);
    let spin = 0;
    while (share.taken < 3) {
      for (let i = 0; i < 1e5; i++) spin += i;
      await new Promise((r) => setImmediate(r));
    }
    share.stop();
    const w = share.window(from, Date.now());
    expect(spin).toBeGreaterThan(0);
    expect(w).not.toBeNull();
    expect(Object.keys(w?.byRole ?? {})).toContain('publisher');
    expect(share.window(0, 1)).toBeNull();
  });
});
