/**
 * Stream sessions handed over at a drain (issue #35): two nodes on one real Redis behind the
 * round-robin balancer (no affinity), each drained in turn and started again, while a third
 * node outside it publishes a numbered stream. Subscribers: `@bayou/client` over `streaming`
 * (its stream on `POST <path>/stream`, everything else on long-polling POSTs), and a client
 * that speaks `eventsource` as Faye's browser client does (its handshake and connects on
 * long-polling POSTs, deliveries on `GET <path>/<clientId>` read as `text/event-stream`,
 * reopened when it ends, and in the connect replies while none is open). The node a stream
 * or a POST reaches first adopts the session; every message arrives once and no client is
 * told to handshake again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouServer, type CreateServerOptions, createServer } from '../src/index.js';
import { eventually, numberedStream, redisPerFile, requireRedis, sleep } from './cluster-helpers.js';
import { describeOf, HandoverClients, handoverNodeOptions, type Subscriber } from './handover-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';
import { cookieOf, openEventSource, type StreamReader, streamingClient } from './stream-client.js';
import type { Msg, TestClient } from './test-client.js';

requireRedis('stream sessions handed over');

const redis = redisPerFile();
const servers: BayouServer[] = [];
const clients = new HandoverClients();
const eventSources: EventSourceClient[] = [];
let balancer: RoundRobinBalancer | null = null;

afterEach(async () => {
  for (const e of eventSources.splice(0)) await e.stop();
  await clients.close();
  await balancer?.close();
  balancer = null;
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

/** Faye's `eventsource` transport as a browser runs it, in Node: a stream reopened when it ends, connects on POSTs. */
class EventSourceClient implements Subscriber {
  readonly name = 'eventsource (as Faye)';
  handshakes = 1;
  readonly log: string[] = [];
  private running = true;
  private readonly readers: StreamReader[] = [];
  private loops: Promise<void>[] = [];

  private constructor(
    private readonly base: string,
    private readonly client: TestClient,
    private readonly channel: string,
  ) {}

  static async start(base: string, channel: string): Promise<EventSourceClient> {
    const client = await streamingClient(base, 'eventsource');
    expect((await client.subscribe(channel)).successful).toBe(true);
    const c = new EventSourceClient(base, client, channel);
    c.loops = [c.streams(), c.connects()];
    eventSources.push(c);
    return c;
  }

  /** Numbers received, on its streams and in its connect replies, in arrival order per source. */
  get received(): number[] {
    const numbers = (messages: Msg[]) =>
      messages
        .filter((m) => m.channel === this.channel && m.successful === undefined)
        .map((m) => (m.data as { n: number }).n);
    return [...this.readers.flatMap((r) => numbers(r.messages)), ...numbers(this.client.received)];
  }

  /** Replies that told it to handshake again (an unknown session), on a stream or a connect. */
  get refusals(): Msg[] {
    return [...this.readers.flatMap((r) => r.messages), ...this.client.received].filter(
      (m) =>
        m.successful === false &&
        (m.advice as { reconnect?: unknown } | undefined)?.reconnect === 'handshake',
    );
  }

  private async streams(): Promise<void> {
    while (this.running) {
      const reader = await openEventSource(this.base, this.client.clientId, cookieOf(this.client)).catch(
        () => null,
      );
      if (reader !== null) {
        this.readers.push(reader);
        this.log.push(`${Date.now() % 100000} stream ${reader.status}`);
        await reader.ended;
      }
      // timed on purpose: the browser's EventSource reopens after the stream's `retry` (shortened).
      if (this.running) await sleep(50);
    }
  }

  private async connects(): Promise<void> {
    while (this.running) {
      const message = {
        channel: '/meta/connect',
        clientId: this.client.clientId,
        connectionType: 'eventsource',
      };
      const answer = await this.client.sendRaw(JSON.stringify([{ id: 'c', ...message }])).catch(() => null);
      this.log.push(`${Date.now() % 100000} connect ${answer?.status} ${answer?.body.slice(0, 160)}`);
      // timed on purpose: Faye sends its next eventsource connect after the advised interval (shortened).
      if (this.running) await sleep(300);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const r of this.readers) r.cut();
    await Promise.all(this.loops);
  }
}

describe('stream sessions handed over at a drain', () => {
  it('@bayou/client over streaming and an eventsource client carry on on another node: same clientId, no handshake, nothing lost', async () => {
    const keyPrefix = `streams-${process.pid}:`;
    const options = (port: number) => handoverNodeOptions(port, redis().url, keyPrefix);
    const start = async (port: number) => {
      const server = await createServer(options(port));
      servers.push(server);
      return { server, port: Number(new URL(await server.listen()).port) };
    };
    const nodes = [await start(0), await start(0)];
    const publisher = (await start(0)).server;
    const rr = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    balancer = rr;
    const streamer = await clients.bayou(`${rr.base}/bayeux`, 'streaming', ['/s']);
    const eventSource = await EventSourceClient.start(rr.base, '/s');
    const subs: Subscriber[] = [eventSource, streamer];
    const stream = numberedStream((data) => Promise.resolve(publisher.bayou.publish('/s', data)));
    await eventually(() => {
      for (const s of subs) expect(s.received.length, describeOf(s, stream.sent)).toBeGreaterThan(3);
    }, 10_000);
    let handedOver = 0;
    for (let i = 0; i < nodes.length; i++) {
      rr.remove(`node${i}`);
      const node = nodes[i] as { server: BayouServer; port: number };
      await node.server.close();
      handedOver += node.server.bayou.stats().removed.handover;
      nodes[i] = await start(node.port);
      rr.restore(`node${i}`);
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
    // Never told its session is unknown (a stream relayed to the gone node said so before).
    expect(eventSource.refusals, eventSource.log.join('\n')).toEqual([]);
    const expected = Array.from({ length: n }, (_, i) => i);
    for (const s of subs) {
      expect(s.handshakes, describeOf(s, n)).toBe(1);
      expect(
        [...s.received].sort((a, b) => a - b),
        describeOf(s, n),
      ).toEqual(expected);
    }
    // Both sessions moved (each node held one of them, or one both, when it was drained).
    expect(handedOver).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('a node shutting down first writes what the owner answers to the streams it relays, so nothing in flight is lost', async () => {
    const keyPrefix = `streams-relay-${process.pid}:`;
    const options: CreateServerOptions = {
      host: '127.0.0.1',
      port: 0,
      logger: false,
      timeout: 2000,
      sweepInterval: 50,
      drainSpread: 0,
      redis: redis().url,
      redisEngine: { keyPrefix, heartbeatMs: 100, nodeTtlMs: 1000, commandTimeoutMs: 2000 },
    };
    const owner = await createServer(options);
    servers.push(owner);
    const ownerBase = await owner.listen();
    const client = await streamingClient(ownerBase, 'eventsource');
    expect((await client.subscribe('/relayed')).successful).toBe(true);
    // Published without a pause while each relaying node closes: answers are in flight then.
    let count = 0;
    const publishing = setInterval(() => {
      for (let i = 0; i < 5; i++) void owner.bayou.publish('/relayed', { n: count++ });
    }, 1);
    const readers: StreamReader[] = [];
    const numbers = () =>
      [...readers.flatMap((r) => r.messages), ...client.received]
        .filter((m) => m.channel === '/relayed' && m.successful === undefined)
        .map((m) => (m.data as { n: number }).n);
    try {
      // Four rounds: the stream reaches another node, which relays it from the owner, and closes.
      for (let round = 0; round < 4; round++) {
        const relaying = await createServer(options);
        servers.push(relaying);
        const reader = await openEventSource(await relaying.listen(), client.clientId, cookieOf(client));
        readers.push(reader);
        await reader.until(() => reader.messages.length >= 20);
        await relaying.close();
        await reader.ended;
      }
    } finally {
      clearInterval(publishing);
    }
    // Its next stream reaches the owner: what was still queued there comes then.
    const last = await openEventSource(ownerBase, client.clientId, cookieOf(client));
    readers.push(last);
    await eventually(
      () => expect(new Set(numbers()).size, `${numbers().length} of ${count}`).toBe(count),
      10_000,
    );
    last.cut();
    expect(numbers().sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
  }, 20_000);
});
