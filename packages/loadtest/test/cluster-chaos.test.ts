/**
 * `bayou-loadtest chaos --cluster`, bounded: 3 `bayou start --redis` processes on one
 * redis-server behind the run's round-robin balancer, 60 @bayou/client instances (half
 * WebSocket, half long-polling only) in 6 rooms over 2 worker processes, a numbered
 * stream per room through /api/publish for 34 s, a node SIGKILLed and restarted every
 * 8 s and Redis restarted once. Every acknowledged message reaches every client of its
 * room exactly once, with no `gap`, and every client of a dead node receives again.
 * The same scenario runs against a cluster it did not start (`--target`), while the test
 * kills one of its nodes. Under CI a missing redis-server fails the run (ChaosRedis.start throws).
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import { startBalancer } from '../src/chaos/cluster-balancer.js';
import { runClusterChaos } from '../src/chaos/cluster-chaos.js';
import {
  ChaosNode,
  ChaosRedis,
  freePort,
  randomKey,
  redisServerPath,
  stopAll,
} from '../src/chaos/cluster-processes.js';

const ci = process.env.CI === 'true' || process.env.CI === '1';

/** The value of an unlabelled counter or gauge in the /metrics of the node on `port`. */
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (line === null) throw new Error(`no ${name} in the /metrics of port ${port}`);
  return Number(line[1]);
}

describe.runIf(redisServerPath() !== null || ci)('cluster chaos, bounded', () => {
  it('loses and duplicates nothing while nodes are SIGKILLed every 8 s and Redis restarts once', async () => {
    const result = await runClusterChaos({
      nodes: 3,
      clients: 60,
      transport: 'mixed',
      rooms: 6,
      roomsPerClient: 1,
      rate: 30,
      duration: 34_000,
      killEvery: 8000,
      restart: 'kill',
      redisRestartAt: 15_000,
      drainMs: 20_000,
      workers: 2,
      seed: 3,
      prefix: '/chaos/',
      logDir: '',
      target: '',
      apiKey: '',
      storm: 'none',
      stormAt: 0,
      probePercent: 0,
    });
    expect(result.nodeRestarts).toBe(3);
    expect(result.redisRestarts).toBe(1);
    expect(result.events.map((e) => e.kind)).toEqual(['SIGKILL', 'redis restart', 'SIGKILL', 'SIGKILL']);
    expect(result.accepted).toBeGreaterThan(result.published * 0.8);
    expect(result.expected).toBeGreaterThanOrEqual(result.accepted); // every room has members
    expect(result.drained).toBe(true);
    expect(result.recovery.count).toBeGreaterThan(0);
    expect({
      lost: result.lost,
      duplicated: result.duplicated,
      gaps: result.gaps,
      stranded: result.stranded,
      unrecovered: result.recovery.unrecovered,
      losses: result.losses,
    }).toEqual({ lost: 0, duplicated: 0, gaps: 0, stranded: 0, unrecovered: 0, losses: [] });
  }, 90_000);

  it('runs against a cluster it did not start (--target): the test kills a node, the run counts', async () => {
    const redis = await ChaosRedis.start();
    const apiKey = randomKey();
    const settings = { redisUrl: redis.url, prefix: `given${process.pid}:`, apiKey, logDir: '' };
    try {
      const nodes = [
        new ChaosNode('a', await freePort(), settings),
        new ChaosNode('b', await freePort(), settings),
      ];
      await Promise.all(nodes.map((n) => n.start()));
      const balancer = await startBalancer(nodes.map((n) => n.port));
      const run = runClusterChaos({
        nodes: 0,
        clients: 40,
        transport: 'mixed',
        rooms: 4,
        roomsPerClient: 1,
        rate: 20,
        duration: 16_000,
        killEvery: 0,
        restart: 'kill',
        redisRestartAt: 0,
        drainMs: 20_000,
        workers: 1,
        seed: 5,
        prefix: '/given/',
        logDir: '',
        target: `http://127.0.0.1:${balancer}/bayeux`,
        apiKey,
        storm: 'none',
        stormAt: 0,
        probePercent: 0,
      });
      // The operator's chaos: node a dies once the 40 clients are connected and 200 more
      // messages went out to them (the stream runs), as the nodes' /metrics count them.
      const total = async (name: string) => {
        const counts = await Promise.all(nodes.map((n) => metric(n.port, name)));
        return counts.reduce((a, b) => a + b, 0);
      };
      await eventually(async () => (await total('bayou_sessions')) >= 40, 30_000, 'the 40 clients', 100);
      const out = await total('bayou_messages_out_total');
      await eventually(
        async () => (await total('bayou_messages_out_total')) >= out + 200,
        30_000,
        'the stream',
        100,
      );
      await (nodes[0] as ChaosNode).stop('SIGKILL');
      const result = await run;
      expect(result.nodeRestarts).toBe(0);
      expect(result.recovery.count).toBeGreaterThan(0); // a new session after the kill
      expect({
        lost: result.lost,
        duplicated: result.duplicated,
        gaps: result.gaps,
        stranded: result.stranded,
      }).toEqual({
        lost: 0,
        duplicated: 0,
        gaps: 0,
        stranded: 0,
      });
    } finally {
      stopAll();
      await redis.stop();
    }
  }, 90_000);
});
