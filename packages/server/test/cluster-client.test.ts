/**
 * `@bayou/client` against three nodes on one Redis behind the round-robin balancer: a node
 * is killed during a numbered stream; its clients are answered `402` with handshake advice
 * by the survivors, handshake again within 15 s, and, with ack and replay (both on by
 * default), every subscriber receives every message exactly once, in order, and no gap.
 * Over long-polling (every request to the next node) and over WebSocket.
 */

import { BayouClient, longPolling, type Message, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type Cluster,
  disconnectAll,
  eventually,
  type Node,
  numberedStream,
  redisPerFile,
  requireRedis,
  startCluster,
} from './cluster-helpers.js';

requireRedis('cluster with @bayou/client');

const redis = redisPerFile();
let cluster: Cluster | null = null;
const clients: BayouClient[] = [];

afterEach(async () => {
  await disconnectAll(clients);
  await cluster?.close();
  cluster = null;
});

interface Watched {
  client: BayouClient;
  received: number[];
  /** clientIds of successful handshakes, with when. */
  handshakes: { id: string; at: number }[];
  /** Connect or other replies that said 402 with reconnect: handshake. */
  unknown: number;
  gaps: unknown[];
}

function watched(url: string, transport: 'websocket' | 'long-polling'): Watched {
  const client = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    minReconnectDelay: 50,
    maxReconnectDelay: 500,
  });
  clients.push(client);
  const w: Watched = { client, received: [], handshakes: [], unknown: 0, gaps: [] };
  client.use({
    incoming(message: Message) {
      if (message.channel === '/meta/handshake' && message.successful === true)
        w.handshakes.push({ id: String(message.clientId), at: Date.now() });
      const advice = message.advice as { reconnect?: string } | undefined;
      if (String(message.error ?? '').startsWith('402') && advice?.reconnect === 'handshake') w.unknown++;
      return message;
    },
  });
  client.on('gap', (gap) => w.gaps.push(gap));
  return w;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe.each(['long-polling', 'websocket'] as const)(
  '@bayou/client over %s through the balancer, a node killed',
  (transport) => {
    it('re-handshakes on a survivor within 15 s and receives every message exactly once, in order, with no gap', async () => {
      cluster = await startCluster(redis(), 3, { historySize: 1000 });
      const subs: Watched[] = [];
      for (let i = 0; i < 6; i++) {
        const w = watched(cluster.url, transport);
        const sub = w.client.subscribe('/numbered/stream', (m) =>
          w.received.push((m.data as { n: number }).n),
        );
        await w.client.connect();
        await sub.ready;
        subs.push(w);
        // One more request to the balancer, so the next session lands on another node.
        await fetch(`${cluster.balancer.base}/healthz`);
      }
      const ownerOf = (w: Watched) => String(w.client.clientId).split('.')[0];
      const victim = cluster.nodes.find((n) => n.server.bayou.nodeId === ownerOf(subs[0] as Watched)) as Node;
      const moved = subs.filter((w) => ownerOf(w) === victim.server.bayou.nodeId);
      expect(moved.length).toBeGreaterThan(0);
      expect(moved.length).toBeLessThan(subs.length);
      const publisher = cluster.nodes.find((n) => n !== victim) as Node;

      const stream = numberedStream((data) => publisher.server.bayou.publish('/numbered/stream', data));
      await eventually(() => {
        for (const w of subs) expect(w.received.length).toBeGreaterThan(10);
      });

      await cluster.kill(victim);
      cluster.balancer.remove(victim.name);
      const killedAt = Date.now();
      for (const w of moved) {
        await eventually(() => expect(w.handshakes.length).toBeGreaterThanOrEqual(2), 15_000);
        const again = w.handshakes[1] as { id: string; at: number };
        expect(again.at - killedAt).toBeLessThan(15_000);
        expect(again.id.split('.')[0]).not.toBe(victim.server.bayou.nodeId);
      }
      // Over long-polling the survivors answered the dead node's sessions with 402.
      if (transport === 'long-polling') for (const w of moved) expect(w.unknown).toBeGreaterThan(0);

      // Messages published after every session came back reach every subscriber too.
      const resumedAt = stream.sent;
      await eventually(() => {
        for (const w of subs) expect(w.received.length).toBeGreaterThan(resumedAt + 5);
      }, 10_000);
      const n = await stream.stop();
      // One more on the same channel: once it is in, a late copy of an earlier one would be too.
      await publisher.server.bayou.publish('/numbered/stream', { n });
      await eventually(() => {
        for (const w of subs) expect(w.received.at(-1)).toBe(n);
      }, 10_000);
      for (const w of subs) {
        expect(w.gaps).toEqual([]);
        expect(w.received).toEqual(range(n + 1));
      }
    });
  },
);
