/**
 * Three `bayou start --redis` processes behind the round-robin balancer; one is killed
 * with SIGKILL during a numbered stream. Its `@bayou/client` subscribers handshake again
 * on a survivor within 15 s and, with ack and replay from Redis history, receive every
 * message exactly once, in order, with no gap — over long-polling and over WebSocket.
 */
import type { ChildProcess } from 'node:child_process';
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startBayou } from './bayou-process.js';
import { disconnectAll, eventually, numberedStream, redisPerFile, requireRedis } from './cluster-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';
import { nodeIdAt } from './test-client.js';

requireRedis('cluster of bayou processes killed with SIGKILL');

const redis = redisPerFile();
const children: ChildProcess[] = [];
const clients: BayouClient[] = [];
let balancer: RoundRobinBalancer | null = null;

afterEach(async () => {
  await disconnectAll(clients);
  await balancer?.close();
  balancer = null;
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** A `bayou start --redis` process; resolves with its port once it listens. */
async function node(url: string, prefix: string): Promise<{ child: ChildProcess; port: number }> {
  const started = await startBayou([
    '--port',
    '0',
    '--redis',
    url,
    '--redis-prefix',
    prefix,
    '--history-size',
    '1000',
    '--log-level',
    'warn',
  ]);
  children.push(started.child);
  return started;
}

describe.each(['long-polling', 'websocket'] as const)('SIGKILL of a bayou process (%s)', (transport) => {
  it('moves its clients to a survivor within 15 s; every message arrives exactly once, in order, no gap', async () => {
    const prefix = `sigkill-${transport}-${process.pid}:`;
    const nodes = [
      await node(redis().url, prefix),
      await node(redis().url, prefix),
      await node(redis().url, prefix),
    ];
    balancer = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    const url = `${balancer.base}/bayeux`;
    const subs: { client: BayouClient; received: number[]; gaps: number; handshakes: string[] }[] = [];
    for (let i = 0; i < 6; i++) {
      const client = new BayouClient(url, {
        transports: [transport === 'websocket' ? websocket : longPolling],
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        minReconnectDelay: 50,
        maxReconnectDelay: 500,
      });
      clients.push(client);
      const w = { client, received: [] as number[], gaps: 0, handshakes: [] as string[] };
      client.on('gap', () => {
        w.gaps++;
      });
      client.use({
        incoming(message) {
          if (message.channel === '/meta/handshake' && message.successful === true)
            w.handshakes.push(String(message.clientId));
          return message;
        },
      });
      const sub = client.subscribe('/numbered', (m) => w.received.push((m.data as { n: number }).n));
      await client.connect();
      await sub.ready;
      subs.push(w);
      await fetch(`${balancer.base}/healthz`); // the next session lands on another node
    }
    // Which process is which node: a handshake on each port names its node id.
    const idOf = new Map<string, number>();
    for (const [i, candidate] of nodes.entries()) {
      idOf.set(await nodeIdAt(`http://127.0.0.1:${candidate.port}`), i);
    }
    const nodeOf = (c: BayouClient) => idOf.get(String(c.clientId).split('.')[0] as string) as number;
    // The publisher talks to node 2 directly; the victim is another node owning subscribers.
    const publisher = new BayouClient(`http://127.0.0.1:${(nodes[2] as { port: number }).port}/bayeux`, {
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    clients.push(publisher);
    await publisher.connect();
    const victimIndex = nodeOf((subs.find((w) => nodeOf(w.client) !== 2) as (typeof subs)[number]).client);
    const victimSubs = subs.filter((w) => nodeOf(w.client) === victimIndex);
    expect(victimSubs.length).toBeGreaterThan(0);
    const victimId = [...idOf].find(([, i]) => i === victimIndex)?.[0] as string;

    const stream = numberedStream((data) => publisher.publish('/numbered', data));
    await eventually(() => {
      for (const w of subs) expect(w.received.length).toBeGreaterThan(10);
    }, 15_000);

    (nodes[victimIndex] as { child: ChildProcess }).child.kill('SIGKILL');
    const killedAt = Date.now();
    balancer.remove(`node${victimIndex}`);

    for (const w of victimSubs) {
      await eventually(() => expect(w.handshakes.length).toBeGreaterThanOrEqual(2), 15_000);
      expect(Date.now() - killedAt).toBeLessThan(15_000);
      expect(String(w.handshakes.at(-1)).split('.')[0]).not.toBe(victimId);
    }
    // Messages published after every session came back reach every subscriber too.
    const resumedAt = stream.sent;
    await eventually(() => {
      for (const w of subs) expect(w.received.length).toBeGreaterThan(resumedAt + 5);
    }, 15_000);
    const n = await stream.stop();
    // One more on the same channel: once it is in, a late copy of an earlier one would be too.
    await publisher.publish('/numbered', { n });
    await eventually(() => {
      for (const w of subs) expect(w.received.at(-1)).toBe(n);
    }, 15_000);
    for (const w of subs) {
      expect(w.gaps).toBe(0);
      expect(w.received).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
    }
  }, 90_000);
});
