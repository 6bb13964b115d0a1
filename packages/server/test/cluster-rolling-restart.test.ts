/**
 * A rolling restart: three `bayou start --redis` processes behind the round-robin
 * balancer, each in turn taken out of the balancer, sent SIGTERM and started again on its
 * port, during a numbered stream to 40 `@bayou/client` subscribers (half over WebSocket,
 * half over long-polling). A node going away hands its sessions over through Redis (issue
 * #35): its clients reconnect with the same clientId wherever the balancer sends them, the
 * node there adopts the session and recovers from Redis history what was published
 * meanwhile: every subscriber receives every message exactly once, in order, with no gap,
 * and none handshakes again. (`cluster-handover.test.ts` runs CometD and Faye too.)
 */
import { BayouClient, longPolling, type Message, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BayouServer, createServer } from '../src/index.js';
import { type BayouProcess, startBayou } from './bayou-process.js';
import { disconnectAll, eventually, numberedStream, redisPerFile, requireRedis } from './cluster-helpers.js';
import { freePort } from './programs.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';
import { nodeIdAt } from './test-client.js';

requireRedis('rolling restart of a cluster of bayou processes');

const CLIENTS = 40;
const redis = redisPerFile();
const processes: BayouProcess[] = [];
const clients: BayouClient[] = [];
let balancer: RoundRobinBalancer | null = null;
let publisher: BayouServer | null = null;

afterEach(async () => {
  await disconnectAll(clients);
  await balancer?.close();
  balancer = null;
  await publisher?.close();
  publisher = null;
  for (const p of processes.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

interface Subscriber {
  client: BayouClient;
  received: number[];
  gaps: number;
  /** clientIds of its successful handshakes, in order. */
  handshakes: string[];
  /** `recovered` flags of its subscribe replies (absent on a first subscribe). */
  recovered: boolean[];
}

/** A client subscribed to the stream; resolves once the subscription is in place. */
async function subscriber(url: string, transport: 'websocket' | 'long-polling'): Promise<Subscriber> {
  const client = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    minReconnectDelay: 50,
    maxReconnectDelay: 500,
  });
  clients.push(client);
  const s: Subscriber = { client, received: [], gaps: 0, handshakes: [], recovered: [] };
  client.on('gap', () => {
    s.gaps++;
  });
  client.use({
    incoming(message: Message) {
      if (message.channel === '/meta/handshake' && message.successful === true)
        s.handshakes.push(String(message.clientId));
      const replay = message.ext?.replay;
      if (message.channel === '/meta/subscribe' && typeof replay === 'object' && replay !== null)
        for (const r of Object.values(replay as Record<string, { recovered?: unknown }>))
          if (typeof r?.recovered === 'boolean') s.recovered.push(r.recovered);
      return message;
    },
  });
  const sub = client.subscribe('/numbered', (m) => s.received.push((m.data as { n: number }).n));
  await client.connect();
  await sub.ready;
  return s;
}

const nodeArgs = (port: number, url: string, prefix: string): string[] =>
  ['--port', String(port), '--redis', url, '--redis-prefix', prefix, '--history-size', '2000'].concat([
    '--log-level',
    'warn',
  ]);

/** What a failed expectation says about `s`: its transport, state, sessions and what it misses. */
function describeOf(s: Subscriber, n: number): string {
  const got = new Set(s.received);
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !got.has(i));
  const t = s.client.transport ?? 'none';
  return `${t} ${s.client.state}, sessions ${s.handshakes.join(' ')}, missing ${missing.slice(0, 20).join(',')}`;
}

const ownerOf = (s: Subscriber): string => String(s.client.clientId).split('.')[0] as string;

describe('rolling restart of three bayou processes (SIGTERM, then start again)', () => {
  it('moves every session off each node in turn; every message arrives exactly once, in order, no gap', async () => {
    const url = redis().url;
    const prefix = `rolling-${process.pid}:`;
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) processes.push(await startBayou(nodeArgs(port, url, prefix)));
    balancer = await RoundRobinBalancer.start(ports.map((port, i) => ({ name: `node${i}`, port })));
    // The publisher is a fourth node in this process, outside the balancer: it is never
    // restarted, and a publish it retries was not taken by Redis (no duplicate).
    publisher = await createServer({
      port: 0,
      historySize: 2000,
      redis: url,
      redisEngine: { keyPrefix: prefix },
    });
    const subs: Subscriber[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      subs.push(await subscriber(`${balancer.base}/bayeux`, i % 2 === 0 ? 'websocket' : 'long-polling'));
    }
    const bus = publisher.bayou;
    const stream = numberedStream((data) => Promise.resolve(bus.publish('/numbered', data)));
    await eventually(() => {
      for (const s of subs) expect(s.received.length, describeOf(s, stream.sent)).toBeGreaterThan(5);
    }, 15_000);

    for (const [i, port] of ports.entries()) {
      const victim = processes[i] as BayouProcess;
      const victimId = await nodeIdAt(`http://127.0.0.1:${port}`);
      // The sessions this node issued (and still owns, unless an earlier drain moved them).
      const moved = subs.filter((s) => ownerOf(s) === victimId);
      if (i === 0) expect(moved.length).toBeGreaterThan(0);
      balancer.remove(`node${i}`);
      victim.child.kill('SIGTERM');
      expect(await victim.exited, victim.output).toBe(0);
      // Its clients carry on with the same session elsewhere: no new handshake.
      const mark = stream.sent;
      await eventually(() => {
        for (const s of moved) expect(s.received.at(-1), describeOf(s, mark)).toBeGreaterThanOrEqual(mark);
      }, 15_000);
      for (const s of moved) expect(s.handshakes, describeOf(s, mark)).toHaveLength(1);
      processes[i] = await startBayou(nodeArgs(port, url, prefix));
      balancer.restore(`node${i}`);
      // Every subscriber gets what was published after the node came back.
      const after = stream.sent;
      await eventually(() => {
        for (const s of subs) expect(s.received.at(-1)).toBeGreaterThanOrEqual(after);
      }, 15_000);
    }

    const n = await stream.stop();
    await eventually(() => {
      for (const s of subs) expect(s.received.length, describeOf(s, n)).toBeGreaterThanOrEqual(n);
    }, 15_000);
    const expected = Array.from({ length: n }, (_, i) => i);
    for (const s of subs) {
      expect(s.gaps, describeOf(s, n)).toBe(0);
      expect(s.recovered, describeOf(s, n)).not.toContain(false);
      expect(s.handshakes, describeOf(s, n)).toHaveLength(1);
      expect(s.received).toEqual(expected);
    }
  }, 180_000);
});
