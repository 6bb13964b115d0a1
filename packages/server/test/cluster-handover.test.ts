/**
 * Sessions that survive their node's drain (issue #35 item 0): three nodes on one real
 * Redis behind the round-robin balancer (no affinity), each in turn drained (the in-process
 * `close()` that SIGTERM runs: the paced drain, then the rest) and started again on its port,
 * while a fourth node outside the balancer publishes a numbered stream. Subscribers: CometD
 * with its ack extension, Faye and `@bayou/client`, each over WebSocket and long-polling
 * (Faye opens its WebSocket after a handshake over HTTP: the node it lands on takes the
 * session over from its owner, as a drain hands it over).
 * A draining node hands its sessions over through Redis; each client reconnects with its
 * clientId wherever the balancer sends it, and the node there adopts the session: every
 * accepted message reaches every client exactly once, and no client handshakes again.
 */
import { BayouClient, longPolling, type Message, type WebSocketConstructor, websocket } from '@bayou/client';
import { AckExtension, type CometD } from 'cometd';
import Faye from 'faye';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BayouServer, type CreateServerOptions, createServer } from '../src/index.js';
import { disconnectAll, eventually, numberedStream, redisPerFile, requireRedis } from './cluster-helpers.js';
import { cometdOver, disconnect, handshake, subscribe } from './cometd-helpers.js';
import { TRANSPORTS, type Transport, within } from './interop-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

requireRedis('sessions handed over at a drain');

interface FayeMessage {
  channel: string;
  successful?: boolean;
}
interface FayeClient {
  subscribe(channel: string, onData: (data: unknown) => void): PromiseLike<unknown>;
  disconnect(): PromiseLike<unknown> | undefined;
  disable(feature: string): void;
  addExtension(extension: {
    incoming?: (message: FayeMessage, callback: (message: FayeMessage) => void) => void;
  }): void;
}
const FayeClient = (Faye as unknown as { Client: new (url: string, options: object) => FayeClient }).Client;

const redis = redisPerFile();
const servers: BayouServer[] = [];
const bayouClients: BayouClient[] = [];
const cometds: CometD[] = [];
const fayes: FayeClient[] = [];
let balancer: RoundRobinBalancer | null = null;

afterEach(async () => {
  for (const c of cometds.splice(0)) await disconnect(c);
  for (const f of fayes.splice(0))
    await within(Promise.resolve(f.disconnect()), 1000, 'faye').catch(() => {});
  await disconnectAll(bayouClients);
  await balancer?.close();
  balancer = null;
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

/** One subscriber: what it received, and how many handshakes it made. */
interface Subscriber {
  readonly name: string;
  readonly received: number[];
  handshakes: number;
  /** Its meta replies (Faye over WebSocket), for a failure's message. */
  readonly log: string[];
}

const subscriber = (name: string): Subscriber => ({ name, received: [], handshakes: 0, log: [] });
const numberOf = (data: unknown): number => (data as { n: number }).n;

async function cometdSubscriber(url: string, transport: Transport): Promise<Subscriber> {
  const s = subscriber(`cometd+ack ${transport}`);
  const c = cometdOver(transport, url);
  cometds.push(c);
  c.registerExtension('ack', new AckExtension());
  c.addListener('/meta/handshake', (m) => {
    if (m.successful === true) s.handshakes++;
  });
  expect((await handshake(c)).successful).toBe(true);
  const { reply } = await subscribe(c, '/numbered', (m) => s.received.push(numberOf(m.data)));
  expect(reply.successful).toBe(true);
  return s;
}

async function fayeSubscriber(url: string, transport: Transport): Promise<Subscriber> {
  const s = subscriber(`faye ${transport}`);
  const client = new FayeClient(url, { timeout: 2, retry: 0.1 });
  fayes.push(client);
  if (transport === 'long-polling') client.disable('websocket');
  client.addExtension({
    incoming(message, callback) {
      if (message.channel === '/meta/handshake' && message.successful === true) s.handshakes++;
      if (message.channel.startsWith('/meta/') && transport === 'websocket')
        s.log.push(`${Date.now() % 100000} ${JSON.stringify(message).slice(0, 200)}`);
      callback(message);
    },
  });
  await within(
    Promise.resolve(client.subscribe('/numbered', (data) => s.received.push(numberOf(data)))),
    5000,
    'faye subscribe',
  );
  return s;
}

async function bayouSubscriber(url: string, transport: Transport): Promise<Subscriber> {
  const s = subscriber(`@bayou/client ${transport}`);
  const client = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    minReconnectDelay: 50,
    maxReconnectDelay: 500,
  });
  bayouClients.push(client);
  client.use({
    incoming(message: Message) {
      if (message.channel === '/meta/handshake' && message.successful === true) s.handshakes++;
      return message;
    },
  });
  const sub = client.subscribe('/numbered', (m) => s.received.push(numberOf(m.data)));
  await client.connect();
  await sub.ready;
  return s;
}

/** What a failed expectation says about `s`. */
function describeOf(s: Subscriber, n: number): string {
  const got = new Set(s.received);
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !got.has(i));
  const dups = s.received.length - got.size;
  return `${s.log.slice(-25).join('\n')}\n${s.name}: ${s.received.length} received, ${dups} duplicates, ${s.handshakes} handshakes, missing ${missing.slice(0, 20).join(',')}`;
}

describe('sessions handed over at a drain (rolling restart of three nodes on Redis)', () => {
  it('every CometD (ack), Faye and @bayou/client subscriber gets every message once, with no new handshake', async () => {
    const keyPrefix = `handover-${process.pid}:`;
    const options = (port: number): CreateServerOptions => ({
      host: '127.0.0.1',
      port,
      logger: false,
      timeout: 2000,
      sweepInterval: 50,
      maxInterval: 5000,
      historySize: 2000,
      drainSpread: 300,
      redis: redis().url,
      redisEngine: { keyPrefix, heartbeatMs: 100, nodeTtlMs: 1000, commandTimeoutMs: 2000 },
    });
    const nodes: BayouServer[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const server = await createServer(options(0));
      servers.push(server);
      ports.push(Number(new URL(await server.listen()).port));
      nodes.push(server);
    }
    balancer = await RoundRobinBalancer.start(ports.map((port, i) => ({ name: `node${i}`, port })));
    const url = `${balancer.base}/bayeux`;
    const publisher = await createServer(options(0));
    servers.push(publisher);

    const subs: Subscriber[] = [];
    for (const transport of TRANSPORTS) {
      subs.push(await cometdSubscriber(url, transport));
      subs.push(await fayeSubscriber(url, transport));
      subs.push(await bayouSubscriber(url, transport));
    }
    const stream = numberedStream((data) => Promise.resolve(publisher.bayou.publish('/numbered', data)));
    await eventually(() => {
      for (const s of subs) expect(s.received.length, describeOf(s, stream.sent)).toBeGreaterThan(3);
    }, 10_000);

    let handedOver = 0;
    for (let i = 0; i < 3; i++) {
      const node = nodes[i] as BayouServer;
      balancer.remove(`node${i}`);
      await node.close();
      handedOver += node.bayou.stats().removed.handover;
      const again = await createServer(options(ports[i] as number));
      servers.push(again);
      await again.listen();
      nodes[i] = again;
      balancer.restore(`node${i}`);
      const mark = stream.sent;
      await eventually(() => {
        for (const s of subs)
          expect(Math.max(...s.received), describeOf(s, mark)).toBeGreaterThanOrEqual(mark);
      }, 10_000);
    }

    const n = await stream.stop();
    await eventually(() => {
      for (const s of subs) expect(new Set(s.received).size, describeOf(s, n)).toBe(n);
    }, 10_000);
    const expected = Array.from({ length: n }, (_, i) => i);
    for (const s of subs) {
      expect(s.handshakes, describeOf(s, n)).toBe(1);
      expect(
        [...s.received].sort((a, b) => a - b),
        describeOf(s, n),
      ).toEqual(expected);
    }
    // Every session moved at least once (each node drained while holding some of them).
    expect(handedOver).toBeGreaterThanOrEqual(subs.length);
  }, 60_000);
});
