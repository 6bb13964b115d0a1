/**
 * The shipped `deploy/cluster/nginx.conf` in front of three nodes on one Redis, run by a
 * real nginx (round-robin, no affinity): `@bayou/client` over long-polling and over
 * WebSocket publishes a numbered stream through it and receives all of it in order, while
 * nginx's own log shows the requests spread over the three nodes. This is the compose
 * file's topology without Docker (no Docker engine runs on the test machines). With
 * `trustProxy` set to nginx's address, as the compose file sets it, the per-IP limits see
 * each client's own address (clients connect from several loopback addresses); without
 * it, every client is nginx.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
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
import {
  cookieOf,
  openEventSource,
  openStream,
  type StreamReader,
  streamConnect,
  streamingClient,
} from './stream-client.js';

const compose = resolve(import.meta.dirname, '../../../deploy/cluster/docker-compose.yml');

/** A long-polling handshake through nginx from `localAddress`: its reply. */
function handshakeFrom(base: string, localAddress: string): Promise<{ successful: boolean; error?: string }> {
  const body = JSON.stringify([
    { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
  ]);
  return new Promise((done, fail) => {
    const req = request(
      `${base}/bayeux`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () =>
          done((JSON.parse(text) as { successful: boolean; error?: string }[])[0] as never),
        );
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

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

describe('the shipped nginx.conf and trustProxy', () => {
  it('the compose file trusts exactly the balancer it runs', () => {
    const text = readFileSync(compose, 'utf8');
    const trusted = /BAYOU_TRUST_PROXY: (\S+)/.exec(text)?.[1];
    const balancer = /balancer:[\s\S]*?ipv4_address: (\S+)/.exec(text)?.[1];
    expect(trusted).toBeDefined();
    expect(trusted).toBe(balancer);
  });

  it('with trustProxy set to nginx, the per-IP session limit counts each client address, not nginx', async () => {
    cluster = await startCluster(redis(), 1, { trustProxy: 'loopback', limits: { maxSessionsPerIp: 2 } });
    nginx = await Nginx.start(cluster.nodes.map((n) => n.port));
    expect((await handshakeFrom(nginx.base, '127.0.0.2')).successful).toBe(true);
    expect((await handshakeFrom(nginx.base, '127.0.0.2')).successful).toBe(true);
    expect(await handshakeFrom(nginx.base, '127.0.0.2')).toMatchObject({
      successful: false,
      error: '403:2:session_limit',
    });
    // Another client behind the same nginx is not refused for the first one's sessions.
    expect((await handshakeFrom(nginx.base, '127.0.0.3')).successful).toBe(true);
  });

  it('without trustProxy, every client behind nginx is nginx to the limits (the failure trustProxy fixes)', async () => {
    cluster = await startCluster(redis(), 1, { limits: { maxSessionsPerIp: 2 } });
    nginx = await Nginx.start(cluster.nodes.map((n) => n.port));
    expect((await handshakeFrom(nginx.base, '127.0.0.2')).successful).toBe(true);
    expect((await handshakeFrom(nginx.base, '127.0.0.2')).successful).toBe(true);
    expect(await handshakeFrom(nginx.base, '127.0.0.3')).toMatchObject({
      successful: false,
      error: '403:2:session_limit',
    });
  });
});

describe('streams through the shipped nginx.conf (three nodes, no affinity)', () => {
  const readers: StreamReader[] = [];
  afterEach(() => {
    for (const r of readers.splice(0)) r.cut();
  });

  it('a streaming response passes unbuffered: padding first, each delivery as it is written, none lost', async () => {
    cluster = await startCluster(redis());
    nginx = await Nginx.start(cluster.nodes.map((n) => n.port));
    const node = cluster.nodes[0]?.server as (typeof cluster.nodes)[0]['server'];
    const client = await streamingClient(nginx.base);
    await client.subscribe('/nginx/stream');
    for (let round = 0; round < 3; round++) {
      // Each stream lands on whichever node nginx picks: the owner, or one relaying to it.
      const reader = await openStream(nginx.base, streamConnect(client), cookieOf(client));
      readers.push(reader);
      await reader.waitFor((m) => m.channel === '/meta/connect');
      expect(reader.lines[0]).toBe(' '.repeat(2048));
      expect(reader.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      for (let n = round * 20; n < round * 20 + 20; n++) {
        await node.bayou.publish('/nginx/stream', n);
        // Each one arrives while the response is still open: nothing waits for a buffer to fill.
        await reader.waitFor((m) => m.channel === '/nginx/stream' && m.data === n);
      }
      expect(reader.done).toBe(false);
    }
    const got = readers.flatMap((r) =>
      r.messages.filter((m) => m.channel === '/nginx/stream').map((m) => m.data),
    );
    expect(got).toEqual([...Array(60).keys()]);
  });

  it("Faye's EventSource request passes unbuffered too", async () => {
    cluster = await startCluster(redis());
    nginx = await Nginx.start(cluster.nodes.map((n) => n.port));
    const node = cluster.nodes[1]?.server as (typeof cluster.nodes)[0]['server'];
    const client = await streamingClient(nginx.base, 'eventsource');
    await client.subscribe('/nginx/es');
    const reader = await openEventSource(nginx.base, client.clientId, cookieOf(client));
    readers.push(reader);
    await reader.until(() => reader.lines.length >= 1);
    expect(reader.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    for (let n = 0; n < 10; n++) {
      await node.bayou.publish('/nginx/es', n);
      await reader.waitFor((m) => m.channel === '/nginx/es' && m.data === n);
    }
    expect(reader.done).toBe(false);
  });
});
