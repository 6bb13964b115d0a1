/**
 * The Redis engine against a private redis-server: the whole contract suite unchanged,
 * then what only Redis has: an outage (Redis killed and started again, empty) and the
 * number of Redis commands per publish.
 */

import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import type { EngineNode, Publication, StreamPosition } from '../src/engine/engine.js';
import type { RedisEngineOptions } from '../src/engine/redis/index.js';
import { RedisEngine } from '../src/engine/redis/index.js';
import { type BackendTuning, engineContract } from './engine-contract.js';
import { RedisClusterServers, RedisServer, redisServerPath } from './redis-server.js';

const available = redisServerPath() !== null;

// Never a silent skip: without redis-server the suite fails and says how to get it.
if (!available) {
  describe('Redis engine', () => {
    it('needs redis-server under CI', () => {
      throw new Error('redis-server not found; scripts/services.mjs installs it through apt-get');
    });
  });
}

let server: Promise<RedisServer> | undefined;
let clusterServers: Promise<RedisClusterServers> | undefined;
let prefixes = 0;
afterAll(async () => {
  await (await server)?.stop();
  await (await clusterServers)?.stop();
});

/** Short heartbeats, so a crashed node's state expires within the suite's wait. */
export function testOptions(url: string): RedisEngineOptions {
  return {
    url,
    keyPrefix: `t${process.pid}.${++prefixes}:`,
    heartbeatMs: 50,
    nodeTtlMs: 300,
    commandTimeoutMs: 2000,
  };
}

/** Engines on the shared test server, each backend under its own key prefix. */
function redisFactory(name: string, extra: RedisEngineOptions) {
  return {
    name,
    expiryMs: 3000,
    async backend(tuning?: BackendTuning) {
      server ??= RedisServer.start();
      const options = { ...testOptions((await server).url), ...extra, ...tuning };
      return {
        create: () => new RedisEngine(options),
        // A killed process: connections drop, no goodbye; its state must expire.
        crash: async (engine: unknown) => (engine as RedisEngine).disconnect(),
        destroy: async () => undefined,
      };
    },
  };
}

if (available) {
  engineContract(redisFactory('redis', {}));
  // SSUBSCRIBE/SPUBLISH as on a Redis Cluster (a single redis-server 7 accepts them too).
  engineContract(redisFactory('redis, sharded pub/sub', { sharded: true }));
  // A real Redis Cluster of three masters: keys and shard channels spread over slots.
  engineContract({
    name: 'redis cluster',
    expiryMs: 3000,
    async backend(tuning?: BackendTuning) {
      clusterServers ??= RedisClusterServers.start(3);
      const { nodes } = await clusterServers;
      const { url: _, ...base } = testOptions('redis://unused');
      const options = { ...base, ...tuning };
      return {
        create: () => new RedisEngine({ ...options, cluster: { nodes } }),
        crash: async (engine: unknown) => (engine as RedisEngine).disconnect(),
        destroy: async () => undefined,
      };
    },
  });
}

const KEEP = { size: 100, ttlMs: 60_000 };
const LONG = { size: 10_000, ttlMs: 60_000 };

/** A node that keeps what it was handed and wakes waiters. */
class TestNode implements EngineNode {
  readonly received: Publication[] = [];
  private waiters: (() => void)[] = [];
  constructor(readonly nodeId: string) {}
  deliver(publication: Publication): void {
    this.received.push(publication);
    for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves once a publication matching `test` arrived, or rejects after `timeoutMs`. */
  async until(test: (p: Publication) => boolean, timeoutMs: number): Promise<void> {
    await eventually(() => this.received.some(test), timeoutMs);
  }
}

const message = (channel: string, n: number) => JSON.stringify({ channel, data: { n } });

describe('Redis engine beyond the contract', () => {
  const engines: RedisEngine[] = [];
  let own: RedisServer | undefined;

  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    await own?.stop();
    own = undefined;
  });

  async function started(url: string, nodeId: string, extra: RedisEngineOptions = {}, prefix?: string) {
    const engine = new RedisEngine({
      ...testOptions(url),
      ...(prefix ? { keyPrefix: prefix } : {}),
      ...extra,
    });
    const node = new TestNode(nodeId);
    await engine.start(node);
    engines.push(engine);
    return { engine, node };
  }

  it('rides out a Redis restart: publishes fail while it is down, delivery resumes, and the lost history gets a new epoch', async () => {
    own = await RedisServer.start();
    const prefix = `outage${process.pid}:`;
    const a = await started(own.url, 'outage-a', {}, prefix);
    const b = await started(own.url, 'outage-b', {}, prefix);
    await b.engine.broker.subscribe('/o');
    await b.engine.presence.setCount('/o', 2);
    expect(await b.engine.presence.occupy('/o')).toBe(true);
    const before = await a.engine.broker.publish('/o', message('/o', 1), KEEP);
    await b.node.until((p) => p.payload === message('/o', 1), 5000);

    await own.kill();
    await eventually(() => !a.engine.ready() && !b.engine.ready(), 5000);
    const t0 = Date.now();
    await expect(a.engine.broker.publish('/o', message('/o', 2), KEEP)).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(a.engine.presence.count('/o')).rejects.toThrow();

    await own.restart();
    const back = Date.now();
    await eventually(() => a.engine.ready() && b.engine.ready(), 5000);
    // Nodes alive before the outage are taken for alive again once their heartbeats resume.
    await eventually(() => a.engine.directory.isAlive('outage-b'), 3000);
    // Publish until one arrives: b must be subscribed again within 5 s of Redis returning.
    let n = 100;
    let after: StreamPosition | null = null;
    while (!b.node.received.some((p) => p.payload === message('/o', n))) {
      expect(Date.now() - back).toBeLessThan(5000);
      n++;
      after = await a.engine.broker.publish('/o', message('/o', n), KEEP).catch(() => null);
      await b.node.until((p) => p.payload === message('/o', n), 200).catch(() => undefined);
    }
    expect(after?.epoch).not.toBe(before?.epoch);
    expect(after?.offset).toBe(1);
    expect(await b.engine.history.since('/o', before as StreamPosition)).toEqual({
      recovered: false,
      position: after,
    });
    // What the node holds is written back, and the counters saw it all.
    await eventually(async () => (await a.engine.presence.count('/o')) === 2, 5000);
    // b's channel occupancy too: a is not the first in, b is the last out.
    expect(await a.engine.presence.occupy('/o')).toBe(false);
    expect(await a.engine.presence.vacate('/o')).toBe(false);
    expect(await b.engine.presence.vacate('/o')).toBe(true);
    expect(a.engine.stats.errors).toBeGreaterThan(0);
    expect(a.engine.stats.reconnects).toBeGreaterThanOrEqual(1);
    expect(b.engine.stats.reconnects).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ['plain pub/sub', 'plain'],
    ['sharded pub/sub', 'sharded'],
    ['a Redis Cluster', 'cluster'],
  ] as const)(
    'costs Redis the same commands per publish (%s) whatever the number of nodes and subscribers',
    async (_, mode) => {
      let url: string;
      let ports: number[];
      let where: RedisEngineOptions;
      if (mode === 'cluster') {
        clusterServers ??= RedisClusterServers.start(3);
        const { nodes } = await clusterServers;
        url = 'redis://unused';
        ports = nodes.map((n) => n.port);
        where = { cluster: { nodes } };
      } else {
        own = await RedisServer.start();
        url = own.url;
        ports = [own.port];
        where = { sharded: mode === 'sharded' };
      }
      const admins = ports.map((port) => new Redis(port, '127.0.0.1'));
      onTestFinished(() => {
        for (const a of admins) a.disconnect();
      });
      const quiet = { heartbeatMs: 60_000, nodeTtlMs: 120_000, ...where };
      // Every command on every Redis, but for INFO itself and the cluster client's topology reads.
      const calls = async () => {
        let total = 0;
        for (const admin of admins) {
          const info = await admin.info('commandstats');
          for (const m of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
            if (m[1] !== 'info' && !m[1]?.startsWith('cluster')) total += Number(m[2]);
          }
        }
        return total;
      };
      const N = 40;
      const perPublish = async (nodes: number, names: string[]) => {
        const cluster = [];
        const prefix = `cost${mode}${nodes}:`;
        for (let i = 0; i < nodes; i++) cluster.push(await started(url, `cost-${nodes}-${i}`, quiet, prefix));
        for (const { engine } of cluster) for (const name of names) await engine.broker.subscribe(name);
        const publisher = cluster[0]!.engine;
        const channel = '/cost/a/b';
        // Redis learns the script and makes the channel's epoch once; then every publish costs the same.
        await publisher.broker.publish(channel, message(channel, 0), KEEP);
        for (const { node } of cluster) await eventually(() => node.received.length === 1, 5000);
        const start = await calls();
        for (let i = 1; i <= N; i++) await publisher.broker.publish(channel, message(channel, i), KEEP);
        const spent = (await calls()) - start;
        for (const { node } of cluster) await eventually(() => node.received.length === N + 1, 5000);
        for (const e of engines.splice(0)) await e.close();
        return spent / N;
      };
      const one = await perPublish(1, ['/cost/a/b']);
      const many = await perPublish(3, ['/cost/a/b', '/cost/a/*', '/cost/**', '/**']);
      expect(many).toBe(one);
      // EVALSHA, TIME, HGET, HINCRBY, XADD, 2×PEXPIRE, and a publish per name matching /cost/a/b (5).
      expect(one).toBe(12);
    },
  );

  it('takes back the channels of a node that was taken for dead while it stalled: vacated, then occupied again', async () => {
    own = await RedisServer.start();
    const admin = new Redis(own.url);
    onTestFinished(() => admin.disconnect());
    const prefix = `stall${process.pid}:`;
    const a = await started(own.url, 'stall-a', {}, prefix);
    // b beats rarely, so once its liveness is gone it stays gone until it beats by hand.
    const b = await started(own.url, 'stall-b', { heartbeatMs: 60_000, nodeTtlMs: 60_001 }, prefix);
    expect(await b.engine.presence.occupy('/stall')).toBe(true);
    expect(await b.engine.presence.reclaim()).toEqual([]);
    await admin.zrem(`${prefix}{ctl}:nodes`, 'stall-b');
    await eventually(() => !a.engine.live.has('stall-b'), 5000);
    expect(await a.engine.presence.vacateDead()).toEqual(['/stall']);
    // b comes back: its next sweep occupies its channel again, once.
    await b.engine.heartbeat();
    expect(await b.engine.presence.reclaim()).toEqual(['/stall']);
    expect(await b.engine.presence.reclaim()).toEqual([]);
    expect(await a.engine.presence.occupy('/stall')).toBe(false);
    expect(await a.engine.presence.vacate('/stall')).toBe(false);
    expect(await b.engine.presence.vacate('/stall')).toBe(true);
  });

  it('delivers what was published while its subscriber connection was cut, once each and in order', async () => {
    own = await RedisServer.start();
    const admin = new Redis(own.url);
    onTestFinished(() => admin.disconnect());
    const prefix = `blip${process.pid}:`;
    const a = await started(own.url, 'blip-a', {}, prefix);
    const b = await started(own.url, 'blip-b', {}, prefix);
    await b.engine.broker.subscribe('/blip');
    await b.engine.broker.subscribe('/**');
    await a.engine.broker.publish('/blip', message('/blip', 1), KEEP);
    await b.node.until((p) => p.payload === message('/blip', 1), 5000);
    const clients = (await admin.client('LIST')) as string;
    const id = /id=(\d+) .*name=bayou:blip-b:sub /.exec(clients)?.[1];
    expect(id).toBeDefined();
    await admin.client('KILL', 'ID', id as string);
    let n = 1;
    let whileDown = 0;
    while (b.engine.stats.reconnects === 0 || n < 30) {
      if (!b.engine.ready()) whileDown++;
      await a.engine.broker.publish('/blip', message('/blip', ++n), LONG);
      if (n > 5000) throw new Error('the subscriber connection never came back');
    }
    expect(whileDown).toBeGreaterThan(0);
    await b.node.until((p) => p.payload === message('/blip', n), 5000);
    const got = b.node.received.filter((p) => p.channel === '/blip');
    expect(got.map((p) => p.position?.offset)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(got.map((p) => p.payload)).toEqual(Array.from({ length: n }, (_, i) => message('/blip', i + 1)));
  });

  it('keeps no key per subscription: a thousand subscribers of a channel on a node are one count', async () => {
    own = await RedisServer.start();
    const admin = new Redis(own.url);
    onTestFinished(() => admin.disconnect());
    const a = await started(own.url, 'idle', {}, 'idle:');
    for (let i = 0; i < 1000; i++) await a.engine.broker.subscribe('/idle');
    expect(await a.engine.presence.setCount('/idle', 1000)).toBe(1000);
    expect((await admin.keys('idle:*')).sort()).toEqual(['idle:{/idle}:counts', 'idle:{ctl}:nodes']);
    expect(await admin.hgetall('idle:{/idle}:counts')).toEqual({ idle: '1000' });
  });

  it('keeps history keys for at most historyChannels channels, and none once they are idle past their TTL', async () => {
    own = await RedisServer.start();
    const admin = new Redis(own.url);
    onTestFinished(() => admin.disconnect());
    // A TTL long enough that the 1,500 evictions' DELs land before the 500 kept channels
    // expire, even on a loaded machine (at 500 ms, CI once saw the count fall past 1,001).
    const a = await started(own.url, 'bounded', { epochTtlMs: 2500, historyChannels: 500 }, 'bounded:');
    const short = { size: 10, ttlMs: 2500 };
    const channels = Array.from({ length: 2000 }, (_, i) => `/user/${i}`);
    const positions = await Promise.all(
      channels.map((c) => a.engine.broker.publish(c, message(c, 1), short)),
    );
    expect(positions.every((p) => p?.offset === 1)).toBe(true);
    // A meta and a stream for each of the 500 most recent channels, and the node list
    // (the last DELs may still be on their way).
    await eventually(async () => (await admin.dbsize()) === 1001, 5000);
    expect(await admin.exists('bounded:{/user/1999}:meta', 'bounded:{/user/1499}:meta')).toBe(1);
    expect(a.engine.historyStats()).toEqual({ channels: 500, expired: 0, evicted: 1500 });
    await eventually(async () => (await admin.dbsize()) === 1, 10_000);
    expect(await admin.keys('bounded:*')).toEqual(['bounded:{ctl}:nodes']);
    await eventually(() => a.engine.historyStats().channels === 0, 10_000);
    expect(a.engine.historyStats()).toEqual({ channels: 0, expired: 500, evicted: 1500 });
    // The channels come back in new epochs: nothing published before is taken for recovered.
    const again = await a.engine.history.since('/user/7', positions[7] as StreamPosition);
    expect(again.recovered).toBe(false);
    expect(again.position.epoch).not.toBe(positions[7]?.epoch);
  });

  it('connects with ioredis options instead of a URL', async () => {
    own = await RedisServer.start();
    const { url: _, ...options } = testOptions(own.url);
    const engine = new RedisEngine({ ...options, redis: { host: '127.0.0.1', port: own.port } });
    await engine.start(new TestNode('by-options'));
    engines.push(engine);
    expect(engine.ready()).toBe(true);
    expect(await engine.directory.nodes()).toEqual(['by-options']);
  });

  it('refuses to start while Redis is unreachable, and leaves no reconnect loop behind', async () => {
    own = await RedisServer.start();
    const url = own.url;
    await own.stop();
    const engine = new RedisEngine(testOptions(url));
    await expect(engine.start(new TestNode('nowhere'))).rejects.toThrow();
    expect(engine.ready()).toBe(false);
    await engine.close();
  });

  it('leaves at once when closed during an outage', async () => {
    own = await RedisServer.start();
    const a = await started(own.url, 'closing');
    await own.kill();
    await eventually(() => !a.engine.ready(), 5000);
    const t0 = Date.now();
    await engines.splice(0)[0]?.close();
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
