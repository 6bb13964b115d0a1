import { describe, expect, it } from 'vitest';
import { percentile } from '../stats.js';
import { parseChaosArgs } from './chaos-cli.js';
import { type ClusterChaosResult, clientPlan } from './cluster-chaos.js';
import { clusterChartSpecs, formatClusterChaos } from './cluster-report.js';

const parsed = parseChaosArgs(['--cluster', '3']);
if (parsed.mode !== 'cluster') throw new Error('expected a cluster run');
const options = parsed.options;

const spread = { count: 0, p50: 0, p99: 0, max: 0 };
const base: ClusterChaosResult = {
  storm: null,
  published: 100,
  accepted: 98,
  rejected: 2,
  expected: 9800,
  delivered: 9800,
  lost: 0,
  duplicated: 0,
  unacknowledged: 0,
  gaps: 0,
  stranded: 0,
  recovery: {
    count: 3,
    p50: 1000,
    p99: 3000,
    max: 3000,
    unrecovered: 0,
    websocket: spread,
    longPolling: spread,
  },
  recoveries: [500, 1000, 3000],
  nodeRestarts: 3,
  redisRestarts: 1,
  events: [],
  series: [{ t: 0, delivered: 10, connected: 100, accepted: 1 }],
  losses: [],
  slow: [],
  drained: true,
  seconds: 12,
};

describe('cluster chaos report', () => {
  it('passes only with nothing lost, duplicated, told gap, stranded or never back', () => {
    expect(formatClusterChaos(options, base)).toMatch(/PASS$/);
    for (const bad of [
      { lost: 1 },
      { duplicated: 1 },
      { gaps: 1 },
      { stranded: 1 },
      { recovery: { ...base.recovery, unrecovered: 1 } },
    ])
      expect(formatClusterChaos(options, { ...base, ...bad })).toMatch(/FAIL$/);
  });

  it('says what it ran: half WebSocket, half long-polling, the restarts and the recovery percentiles', () => {
    const text = formatClusterChaos(options, base);
    expect(text).toContain(
      '1,000 @bayou/client clients (500 WebSocket, 500 long-polling only), 10 rooms, 1 per client',
    );
    expect(text).toContain('node restarts 3 (SIGKILL then restart, every 30 s), Redis restarts 1');
    expect(text).toContain('after p50 1.00 s, p99 3.00 s, max 3.00 s; never 0');
    expect(text).toMatch(/\n {4}WebSocket .*\n {4}long-polling /);
  });

  it('names a single transport and does not split the recoveries by transport then', () => {
    const text = formatClusterChaos({ ...options, transport: 'streaming' }, base);
    expect(text).toContain('1,000 @bayou/client clients (all streaming), 10 rooms, 1 per client');
    expect(text).not.toMatch(/\n {4}(WebSocket|long-polling) /);
  });

  it('draws the recovery distribution as percentile against seconds, ending at the maximum', () => {
    const recovery = clusterChartSpecs(base).find((c) => c.id === 'recovery');
    expect(recovery?.x.at(-1)).toBe(100);
    expect(recovery?.series[0]?.values.at(-1)).toBe(3);
    expect(recovery?.series[0]?.values[0]).toBe(0.5);
  });

  it('takes percentiles of a sorted list and gives mixed runs half of each transport', () => {
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(percentile([1, 2, 3, 4], 0.99)).toBe(4);
    expect(percentile([], 0.5)).toBe(0);
    const plan = clientPlan({ ...options, clients: 10 });
    expect(plan.filter((c) => c.transport === 'websocket')).toHaveLength(5);
    expect(plan.every((c) => c.rooms.length === 1)).toBe(true);
  });
});
