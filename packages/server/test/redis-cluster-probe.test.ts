/**
 * Delivery probes on a Redis Cluster (three masters, sharded pub/sub): ioredis opens one
 * subscriber connection per shard, and each shard the node follows a channel on is probed
 * on its own — a probe on every followed shard, none to a shard where the node follows
 * nothing. One shard's subscriber connection made silent (a loopback proxy in front of that
 * master stops forwarding to the node while the TCP connection stays up) turns the node
 * not ready within two probe intervals; it reconnects, and its subscriber gets every
 * message the other node published meanwhile, once and in order. The same after a shard's
 * subscriber connection ended (ioredis replaces and resubscribes it by itself).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEngine } from '../src/engine/redis/index.js';
import { keySlot } from '../src/engine/redis/redis-slots.js';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually, redisAvailable, requireRedis } from './cluster-helpers.js';
import { RedisClusterServers } from './redis-server.js';
import { SilencingProxy } from './silencing-proxy.js';
import { TestClient } from './test-client.js';

requireRedis('delivery probes on a Redis Cluster');

const PROBE_MS = 300;
const PREFIX = `cprobe${process.pid}:`;

describe.runIf(redisAvailable)('delivery probes on a Redis Cluster', () => {
  let cluster: RedisClusterServers;
  let proxy: SilencingProxy;
  const servers: BayouServer[] = [];
  const engines: RedisEngine[] = [];
  const bases: string[] = [];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    cluster = await RedisClusterServers.start(3);
    // The second master is reached through the proxy by node A only.
    const silenced = cluster.servers[1] as { port: number };
    proxy = await SilencingProxy.start(silenced.port);
    const natMap = { [`127.0.0.1:${silenced.port}`]: { host: '127.0.0.1', port: proxy.port } };
    for (const options of [{ natMap }, {}]) {
      const engine = new RedisEngine({
        cluster: { nodes: cluster.nodes, options },
        keyPrefix: PREFIX,
        probeIntervalMs: PROBE_MS,
        commandTimeoutMs: 2000,
      });
      const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000, engine });
      engines.push(engine);
      servers.push(server);
      bases.push(await server.listen());
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const s of servers) await s.close();
    await proxy?.close();
    await cluster?.stop();
  });

  /** A channel whose pub/sub name hashes to master `i` (the cluster splits slots evenly). */
  const channelOn = (i: number, skip = 0): string => {
    const per = Math.ceil(16384 / 3);
    for (let k = 0, found = 0; ; k++) {
      const slot = keySlot(`${PREFIX}{/cp/${k}}`);
      if (slot >= i * per && slot < (i + 1) * per && found++ === skip) return `/cp/${k}`;
    }
  };
  const spublishCalls = async (i: number): Promise<number> => {
    const admin = new Redis((cluster.servers[i] as { port: number }).port, '127.0.0.1');
    try {
      const info = await admin.info('commandstats');
      return Number(/cmdstat_spublish:calls=(\d+)/.exec(info)?.[1] ?? 0);
    } finally {
      admin.disconnect();
    }
  };
  const readyz = async (base: string) => (await fetch(`${base}/readyz`)).status;

  it('probes each followed shard, none other, and finds one silent shard', async () => {
    const [a, b] = engines as [RedisEngine, RedisEngine];
    const [baseA, baseB] = bases as [string, string];
    const onProxied = channelOn(1);
    const onFirst = channelOn(0);
    const subscriber = new TestClient(baseA, 'websocket');
    clients.push(subscriber);
    await subscriber.connect();
    await subscriber.subscribe([onProxied, onFirst]);

    // A probe goes and comes back on the two shards node A follows a channel on.
    const probed = () => a.shardProbes?.passes() ?? new Map<string, number>();
    await eventually(() => {
      expect([...probed().keys()].sort()).toEqual(
        [`127.0.0.1:${(cluster.servers[0] as { port: number }).port}`, `127.0.0.1:${proxy.port}`].sort(),
      );
      expect([...probed().values()].every((n) => n >= 1)).toBe(true);
    }, 10_000);
    // None to the third, where it follows nothing (and nobody publishes meanwhile).
    const third = await spublishCalls(2);
    const passed = [...probed().values()];
    await eventually(
      () => expect([...probed().values()].every((n, i) => n >= (passed[i] as number) + 2)).toBe(true),
      10_000,
    );
    expect(await spublishCalls(2)).toBe(third);
    // Node B follows no channel: it sends no probe at all.
    expect(b.shardProbes?.passes().size).toBe(0);

    // The proxied shard's subscriber connection goes silent: A turns not ready, then ready again.
    const accepted: number[] = [];
    let n = 0;
    const publishOne = async () => {
      const i = n++;
      try {
        await servers[1]?.bayou.publish(onProxied, i);
        accepted.push(i);
      } catch {
        // refused: never delivered, never counted
      }
    };
    await publishOne();
    await subscriber.waitFor((m) => m.channel === onProxied && m.data === 0);
    const failuresBefore = a.stats.probeFailures;
    expect(proxy.silence()).toBe(1);
    const silentAt = performance.now();
    let notReadyAfter = -1;
    while (performance.now() - silentAt < 15_000) {
      await publishOne();
      expect(await readyz(baseB)).toBe(200);
      const status = await readyz(baseA);
      if (status === 503 && notReadyAfter < 0) notReadyAfter = performance.now() - silentAt;
      if (notReadyAfter >= 0 && status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20)); // timed on purpose: the publish pace
    }
    expect(notReadyAfter).toBeGreaterThan(0);
    expect(notReadyAfter).toBeLessThan(2 * PROBE_MS + 300);
    expect(await readyz(baseA)).toBe(200);
    expect(a.stats.probeFailures).toBeGreaterThan(failuresBefore);
    expect(b.stats.probeFailures).toBe(0);
    for (let i = 0; i < 5; i++) await publishOne();
    const last = accepted.at(-1) as number;
    await subscriber.waitFor((m) => m.channel === onProxied && m.data === last);
    expect(subscriber.deliveries(onProxied).map((m) => m.data)).toEqual(accepted);
  }, 60_000);

  it('catches up after one shard subscriber connection dropped, which ioredis resubscribes by itself', async () => {
    const [a] = engines as [RedisEngine, RedisEngine];
    const channel = channelOn(0, 1);
    const subscriber = new TestClient(bases[0] as string, 'websocket');
    clients.push(subscriber);
    await subscriber.connect();
    await subscriber.subscribe(channel);
    const accepted: number[] = [];
    let n = 0;
    const publishOne = async () => {
      const i = n++;
      try {
        await servers[1]?.bayou.publish(channel, i);
        accepted.push(i);
      } catch {
        // refused: never delivered, never counted
      }
    };
    await publishOne();
    await subscriber.waitFor((m) => m.channel === channel && m.data === 0);
    const reconnects = a.stats.reconnects;
    const admin = new Redis((cluster.servers[0] as { port: number }).port, '127.0.0.1');
    try {
      // Every pub/sub connection to the first master ends (node A's shard subscriber among them)
      // while node B publishes there: before, the messages of the gap were lost, silently.
      const killed = admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      for (let i = 0; i < 30; i++) await publishOne();
      expect(Number(await killed)).toBeGreaterThanOrEqual(1);
    } finally {
      admin.disconnect();
    }
    await eventually(() => expect(a.stats.reconnects).toBeGreaterThan(reconnects), 10_000);
    for (let i = 0; i < 5; i++) await publishOne();
    const last = accepted.at(-1) as number;
    await subscriber.waitFor((m) => m.channel === channel && m.data === last);
    expect(subscriber.deliveries(channel).map((m) => m.data)).toEqual(accepted);
    await eventually(async () => expect(await readyz(bases[0] as string)).toBe(200), 10_000);
    // ioredis keeps the shard channels it resubscribes by itself: after the reconnects of both
    // cases, each channel is there once (it grew by every followed channel at each reconnect).
    const kept = (a.sub as unknown as { shardedSubscribers: { channels: Map<number, string[]> } })
      .shardedSubscribers.channels;
    const listed = [...kept.values()].flat();
    expect(a.stats.reconnects).toBeGreaterThanOrEqual(2);
    expect(listed.length).toBe(new Set(listed).size);
  }, 60_000);
});
