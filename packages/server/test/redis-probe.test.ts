/**
 * Delivery probes: one node's pub/sub connection made silent while its TCP connection
 * stays up (a loopback proxy between that node and Redis stops forwarding what Redis
 * sends on it). The node turns not ready within two probe intervals, reconnects, and each
 * of its subscribers gets every accepted message once, in order (missed ones from
 * history); the other node never notices. On a channel without history, a `@bayou/client`
 * subscriber of the silenced node gets a `gap` event where messages went missing, never
 * silence.
 */

import { BayouClient, type GapInfo, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RedisEngine } from '../src/engine/redis/index.js';
import { type BayouServer, createServer } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { disconnectAll, eventually, redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';
import { SilencingProxy } from './silencing-proxy.js';
import { TestClient } from './test-client.js';

requireRedis('delivery probes');

const PROBE_MS = 400;

describe.runIf(redisAvailable)('delivery probes', () => {
  const redis = redisPerFile();
  let proxy: SilencingProxy;
  const servers: BayouServer[] = [];
  const bases: string[] = [];
  const clients: TestClient[] = [];
  const sdkClients: BayouClient[] = [];

  beforeAll(async () => {
    proxy = await SilencingProxy.start(redis().port);
    const keyPrefix = `probe${process.pid}:`;
    for (const port of [proxy.port, redis().port]) {
      const server = await createServer({
        host: '127.0.0.1',
        port: 0,
        timeout: 2000,
        sweepInterval: 50,
        redis: `redis://127.0.0.1:${port}`,
        history: [{ pattern: '/nohistory/**', size: 0 }],
        redisEngine: { keyPrefix, probeIntervalMs: PROBE_MS, commandTimeoutMs: 2000 },
      });
      servers.push(server);
      bases.push(await server.listen());
    }
  });
  afterAll(async () => {
    await disconnectAll(sdkClients);
    for (const c of clients) await c.close();
    for (const s of servers) await s.close();
    await proxy?.close();
  });

  const readyz = async (base: string) => (await fetch(`${base}/readyz`)).status;

  /**
   * Silences node A's subscriber connection and publishes from B until A was not ready and
   * is ready again; says how long A took to turn not ready, and whether B ever was not.
   */
  async function silenceA(publishOne: () => Promise<void>) {
    const [baseA, baseB] = bases as [string, string];
    expect(proxy.silence()).toBe(1);
    const silentAt = performance.now();
    let notReadyAfter = -1;
    let bWentNotReady = false;
    // Publish from the healthy node all along, checking both nodes' readiness.
    while (performance.now() - silentAt < 10_000) {
      await publishOne();
      if ((await readyz(baseB)) !== 200) bWentNotReady = true;
      const statusA = await readyz(baseA);
      if (statusA === 503 && notReadyAfter < 0) {
        notReadyAfter = performance.now() - silentAt;
        // Not ready, yet alive: /healthz (liveness) stays 200, so nothing restarts the node.
        expect((await fetch(`${baseA}/healthz`)).status).toBe(200);
      }
      if (notReadyAfter >= 0 && statusA === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20)); // timed on purpose: the publish pace
    }
    return { notReadyAfter, bWentNotReady };
  }
  const engineOf = (s: BayouServer) => operationsOf(s.app).engine as RedisEngine;

  it('turns the silent node not ready, reconnects it, and its subscribers miss nothing', async () => {
    const [a, b] = servers as [BayouServer, BayouServer];
    const [baseA, baseB] = bases as [string, string];
    const channel = '/probe/feed';
    const onA = [new TestClient(baseA, 'websocket'), new TestClient(baseA, 'long-polling')];
    const onB = new TestClient(baseB, 'websocket');
    clients.push(...onA, onB);
    for (const c of [...onA, onB]) {
      await c.connect();
      await c.subscribe(channel);
    }
    const accepted: number[] = [];
    let n = 0;
    const publishOne = async () => {
      const i = n++;
      try {
        await b.bayou.publish(channel, i);
        accepted.push(i);
      } catch {
        // refused: never delivered, never counted
      }
    };
    await publishOne();
    await eventually(() => onA.every((c) => c.deliveries(channel).length === 1), 5000);
    expect([await readyz(baseA), await readyz(baseB)]).toEqual([200, 200]);
    const reconnectsBefore = engineOf(a).stats.reconnects;

    const { notReadyAfter, bWentNotReady } = await silenceA(publishOne);
    expect(notReadyAfter).toBeGreaterThan(0);
    // Within two probe intervals (plus this loop's own step on a loaded machine).
    expect(notReadyAfter).toBeLessThan(2 * PROBE_MS + 300);
    expect(await readyz(baseA)).toBe(200);
    expect(engineOf(a).stats.probeFailures).toBeGreaterThanOrEqual(1);
    expect(engineOf(a).stats.reconnects).toBeGreaterThan(reconnectsBefore);
    // A new subscriber connection replaced the silent one.
    expect(proxy.links.filter((l) => l.subscriber && !l.silent && !l.client.destroyed)).toHaveLength(1);
    for (let i = 0; i < 5; i++) await publishOne();
    const last = accepted[accepted.length - 1] as number;
    for (const c of [...onA, onB]) {
      await c.waitFor((m) => m.channel === channel && m.data === last);
      expect(c.deliveries(channel).map((m) => m.data)).toEqual(accepted);
    }
    expect(bWentNotReady).toBe(false);
    expect(engineOf(b).stats.probeFailures).toBe(0);
    const metrics = await (await fetch(`${baseA}/metrics`)).text();
    expect(metrics).toMatch(/bayou_engine_probe_failures_total [1-9]/);
  }, 30_000);

  it('tells a gap, never silence, to a subscriber of the silenced node on a channel without history', async () => {
    const [a, b] = servers as [BayouServer, BayouServer];
    const [baseA, baseB] = bases as [string, string];
    const channel = '/nohistory/feed';
    type Seen = { log: (number | 'gap')[]; gaps: GapInfo[] };
    const watch = async (base: string): Promise<Seen> => {
      const client = new BayouClient(`${base}/bayeux`, {
        transports: [websocket],
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      });
      sdkClients.push(client);
      const seen: Seen = { log: [], gaps: [] };
      client.on('gap', (gap) => {
        seen.gaps.push(gap);
        seen.log.push('gap');
      });
      const sub = client.subscribe(channel, (m) => seen.log.push(m.data as number));
      await client.connect();
      await sub.ready;
      return seen;
    };
    const [onA, onB] = [await watch(baseA), await watch(baseB)];
    const accepted: number[] = [];
    let n = 0;
    const publishOne = async () => {
      const i = n++;
      try {
        await b.bayou.publish(channel, i);
        accepted.push(i);
      } catch {
        // refused: never delivered, never counted
      }
    };
    await publishOne();
    await eventually(() => expect(onA.log).toEqual([0]), 5000);
    const failuresBefore = engineOf(a).stats.probeFailures;

    const { notReadyAfter } = await silenceA(publishOne);
    expect(notReadyAfter).toBeGreaterThan(0);
    expect(engineOf(a).stats.probeFailures).toBeGreaterThan(failuresBefore);
    for (let i = 0; i < 5; i++) await publishOne();
    const last = accepted[accepted.length - 1] as number;
    await eventually(() => expect(onA.log.at(-1)).toBe(last), 5000);

    // Node A lost what Redis sent while its connection was silent: its subscriber is told
    // once, where messages are missing, and gets everything else once and in order.
    expect(onA.gaps).toHaveLength(1);
    expect(onA.gaps[0]).toMatchObject({ channel, to: null }); // `from`: what the client last knew
    const at = onA.log.indexOf('gap');
    const before = onA.log.slice(0, at) as number[];
    const after = onA.log.slice(at + 1) as number[];
    expect(before).toEqual(accepted.slice(0, before.length));
    const resumed = accepted.indexOf(after[0] as number);
    expect(resumed).toBeGreaterThan(before.length); // something was lost: what the gap says
    expect(after).toEqual(accepted.slice(resumed));
    // The other node's subscriber got everything, and no gap.
    await eventually(() => expect(onB.log).toEqual(accepted), 5000);
    expect(onB.gaps).toEqual([]);
    expect(await readyz(baseB)).toBe(200);
  }, 30_000);

  it('sends no probe from a node while it follows no channel', async () => {
    const a = servers[0] as BayouServer;
    const c = await createServer({
      host: '127.0.0.1',
      port: 0,
      timeout: 2000,
      redis: `redis://127.0.0.1:${redis().port}`,
      redisEngine: { keyPrefix: `probe${process.pid}:`, probeIntervalMs: PROBE_MS },
    });
    servers.push(c);
    const client = new TestClient(await c.listen(), 'websocket');
    clients.push(client);
    await client.connect(); // a session, and the node's inbox, but no channel
    // Node A follows channels (the tests above): it probes all along; C, meanwhile, never.
    const aProbesThrice = async () => {
      const from = engineOf(a).probe.passes;
      await eventually(() => expect(engineOf(a).probe.passes).toBeGreaterThanOrEqual(from + 3), 10_000);
    };
    await aProbesThrice();
    expect(engineOf(c).probe.passes).toBe(0);
    // Its first channel starts them; its last unsubscribe stops them (one in flight may still come back).
    await client.subscribe('/probe/c');
    await eventually(() => expect(engineOf(c).probe.passes).toBeGreaterThanOrEqual(2), 10_000);
    expect((await client.unsubscribe('/probe/c')).successful).toBe(true);
    const after = engineOf(c).probe.passes;
    await aProbesThrice();
    expect(engineOf(c).probe.passes).toBeLessThanOrEqual(after + 1);
    expect(engineOf(c).probe.failures).toBe(0);
  }, 30_000);
});
