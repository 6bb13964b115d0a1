/**
 * The shipped `deploy/cluster/nginx.conf` in front of three nodes on one Redis, run by a
 * real nginx (round-robin, no affinity): `@bayou/client` over long-polling and over
 * WebSocket publishes a numbered stream through it and receives all of it in order, while
 * nginx's own log shows the requests spread over the three nodes. This is the compose
 * file's topology without Docker (no Docker engine runs on the test machines).
 */
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type Cluster,
  disconnectAll,
  eventually,
  redisPerFile,
  requireRedis,
  startCluster,
} from './cluster-helpers.js';
import { Nginx } from './nginx.js';

// Without nginx, Nginx.start throws and each test fails, saying how to get it.
requireRedis('three nodes behind nginx');

const redis = redisPerFile();
let cluster: Cluster | null = null;
let nginx: Nginx | null = null;
const clients: BayouClient[] = [];

afterEach(async () => {
  await disconnectAll(clients);
  await nginx?.stop();
  nginx = null;
  await cluster?.close();
  cluster = null;
});

function client(url: string, transport: 'long-polling' | 'websocket'): BayouClient {
  const c = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
  });
  clients.push(c);
  return c;
}

describe.each(['long-polling', 'websocket'] as const)(
  'three nodes behind the shipped nginx.conf (%s)',
  (transport) => {
    it('delivers 100 published messages in order, none lost, with requests spread over every node', async () => {
      cluster = await startCluster(redis());
      nginx = await Nginx.start(cluster.nodes.map((n) => n.port));
      const url = `${nginx.base}/bayeux`;

      // Three subscribers and a publisher: each connection or request may land on any node.
      const received: number[][] = [];
      for (let i = 0; i < 3; i++) {
        const got: number[] = [];
        received.push(got);
        const subscriber = client(url, transport);
        const sub = subscriber.subscribe('/nginx/numbered', (m) => got.push((m.data as { n: number }).n));
        await subscriber.connect();
        await sub.ready;
      }
      const publisher = client(url, transport);
      await publisher.connect();
      for (let n = 0; n < 100; n++) await publisher.publish('/nginx/numbered', { n });

      await eventually(() => {
        for (const got of received) expect(got).toHaveLength(100);
      }, 10_000);
      for (const got of received) expect(got).toEqual(Array.from({ length: 100 }, (_, n) => n));

      const ports = new Set(cluster.nodes.map((n) => n.port));
      const bayeux = nginx.requests().filter(([, uri]) => uri === '/bayeux');
      for (const [, , port] of bayeux) expect(ports.has(port)).toBe(true);
      if (transport === 'long-polling') {
        // Every POST may land anywhere: all three nodes answered a fair share.
        const perNode = cluster.nodes.map((n) => bayeux.filter(([, , port]) => port === n.port).length);
        expect(bayeux.length).toBeGreaterThan(100);
        for (const count of perNode) expect(count).toBeGreaterThan(bayeux.length / 6);
      } else {
        // Four WebSockets on at least two nodes (nginx's two workers each rotate on their
        // own): the publication crossed Redis to reach the subscribers on other nodes.
        const sessions = cluster.nodes.map((n) => n.server.bayou.stats().sessions);
        expect(sessions.reduce((a, b) => a + b, 0)).toBe(4);
        expect(sessions.filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
      }
    });
  },
);
