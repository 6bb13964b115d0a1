/**
 * A message traced from its publish to its delivery: a W3C `traceparent` given on publish
 * (Bayeux `ext.traceparent`, the publish API's `traceparent` header) continues as the
 * spans `bayou.publish` → `bayou.engine` → `bayou.deliver` (one per delivering node), all
 * in the caller's trace, with an in-memory OpenTelemetry SDK installed before the nodes.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodePublication } from '../src/engine/redis/redis-broker.js';
import { createServer, publishApi } from '../src/index.js';
import { type Cluster, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { eventually, type Msg, TestClient } from './test-client.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const KEY = 'tracing-key-0123456789abcdef';

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});
afterEach(() => exporter.reset());

const traceId = (n: number) => `4bf92f3577b34da6a3ce929d0e0e47${String(n).padStart(2, '0')}`;
const parentId = '00f067aa0ba902b7';
const traceparent = (n: number) => `00-${traceId(n)}-${parentId}-01`;

function spansOf(id: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === id);
}

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** Waits for publish, engine and `deliveries` delivery spans of trace `id`, and checks their chain. */
async function chainOf(id: string, deliveries: number) {
  await eventually(
    () => spansOf(id).filter((s) => s.name === 'bayou.deliver').length === deliveries,
    5000,
    `${deliveries} delivery spans of trace ${id}`,
  );
  const spans = spansOf(id);
  const publish = spans.find((s) => s.name === 'bayou.publish');
  const engine = spans.find((s) => s.name === 'bayou.engine');
  expect(publish).toBeDefined();
  expect(engine).toBeDefined();
  expect(parentOf(publish as ReadableSpan)).toBe(parentId);
  expect(parentOf(engine as ReadableSpan)).toBe(publish?.spanContext().spanId);
  const delivers = spans.filter((s) => s.name === 'bayou.deliver');
  for (const d of delivers) expect(parentOf(d)).toBe(engine?.spanContext().spanId);
  return { publish: publish as ReadableSpan, engine: engine as ReadableSpan, delivers };
}

async function subscribed(base: string, channel: string): Promise<TestClient> {
  const c = new TestClient(base, 'websocket');
  await c.connect();
  expect((await c.subscribe(channel)).successful).toBe(true);
  return c;
}

describe('tracing on the memory engine', () => {
  it('a publish with ext.traceparent gives publish, engine and delivery spans in its trace, and the write histogram counts its flush', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000 });
    const base = await server.listen();
    try {
      const sub = await subscribed(base, '/t/mem');
      const pub = new TestClient(base, 'websocket');
      await pub.connect();
      const reply = await pub.request({
        channel: '/t/mem',
        clientId: pub.clientId,
        data: { n: 1 },
        ext: { traceparent: traceparent(1) },
      });
      expect(reply.successful).toBe(true);
      await sub.waitFor((m: Msg) => m.channel === '/t/mem');
      const { delivers, engine } = await chainOf(traceId(1), 1);
      expect(engine.attributes['bayou.engine']).toBe('memory');
      expect(delivers[0]?.attributes['bayou.sessions']).toBe(1);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const count = /^bayou_publish_to_write_seconds_count (\d+)/m.exec(metrics);
      expect(Number(count?.[1])).toBeGreaterThan(0);
      await Promise.all([sub.close(), pub.close()]);
    } finally {
      await server.close();
    }
  });
});

describe('the trace reaches the client and its acknowledgement (memory engine)', () => {
  it('a subscriber gets ext.traceparent naming the delivery span; a replay subscriber gets it beside its position', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000 });
    const base = await server.listen();
    try {
      const plain = await subscribed(base, '/t/client');
      const replay = new TestClient(base, 'websocket');
      await replay.connect({ replay: true });
      expect((await replay.subscribe('/t/client')).successful).toBe(true);
      await server.bayou.publish('/t/client', { n: 7 }, { traceparent: traceparent(7) });
      const got = await plain.waitFor((m: Msg) => m.channel === '/t/client');
      const positioned = await replay.waitFor((m: Msg) => m.channel === '/t/client');
      const { delivers } = await chainOf(traceId(7), 1);
      const deliver = delivers[0] as ReadableSpan;
      const expected = `00-${traceId(7)}-${deliver.spanContext().spanId}-01`;
      expect(got).toEqual({ channel: '/t/client', data: { n: 7 }, ext: { traceparent: expected } });
      expect(positioned.data).toEqual({ n: 7 });
      const ext = positioned.ext as { traceparent?: string; replay?: { offset?: number } };
      expect(ext.traceparent).toBe(expected);
      expect(ext.replay?.offset).toBe(1);
      await Promise.all([plain.close(), replay.close()]);
    } finally {
      await server.close();
    }
  });

  it('a delta subscriber gets ext.traceparent beside ext.delta, on the whole message and on a delta', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000 });
    const base = await server.listen();
    try {
      const c = new TestClient(base, 'websocket');
      await c.connect();
      const sub = await c.request({
        channel: '/meta/subscribe',
        clientId: c.clientId,
        subscription: '/t/delta',
        ext: { delta: 'merge-patch' },
      });
      expect(sub.successful).toBe(true);
      const big = 'x'.repeat(200);
      await server.bayou.publish('/t/delta', { a: 1, big }, { traceparent: traceparent(9) });
      await server.bayou.publish('/t/delta', { a: 2, big }, { traceparent: traceparent(10) });
      await c.waitFor((m: Msg) => m.channel === '/t/delta' && (m.data as { a?: number }).a === 2);
      const got = c.received.filter((m) => m.channel === '/t/delta');
      expect(got).toHaveLength(2);
      const exts = got.map((m) => m.ext as { traceparent?: string; delta?: { id?: string; from?: string } });
      expect(exts[0]?.traceparent).toMatch(new RegExp(`^00-${traceId(9)}-`));
      expect(exts[0]?.delta?.id).toBeTypeOf('string');
      expect(exts[1]?.traceparent).toMatch(new RegExp(`^00-${traceId(10)}-`));
      expect(exts[1]?.delta?.from).toBe(exts[0]?.delta?.id);
      expect(got[1]?.data).toEqual({ a: 2 });
      await c.close();
    } finally {
      await server.close();
    }
  });

  it("a client's acknowledgement of the batch holding a traced message is a bayou.ack span under its delivery span", async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 300 });
    const base = await server.listen();
    const send = async (messages: Msg[]): Promise<Msg[]> => {
      const r = await fetch(`${base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(messages),
      });
      return (await r.json()) as Msg[];
    };
    try {
      const [hs] = await send([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['long-polling'],
          ext: { ack: true },
        },
      ]);
      const clientId = hs?.clientId as string;
      const connect = (ack: number): Msg => ({
        channel: '/meta/connect',
        clientId,
        connectionType: 'long-polling',
        ext: { ack },
      });
      await send([connect(0)]);
      await send([{ channel: '/meta/subscribe', clientId, subscription: '/t/ack' }]);
      await server.bayou.publish('/t/ack', 'a', { traceparent: traceparent(8) });
      const batch = await send([connect(0)]);
      expect(batch.map((m) => m.ext)).toEqual([
        { traceparent: expect.stringMatching(new RegExp(`^00-${traceId(8)}-`)) },
        { ack: 1 },
      ]);
      const { delivers } = await chainOf(traceId(8), 1);
      expect(spansOf(traceId(8)).some((s) => s.name === 'bayou.ack')).toBe(false);
      await send([connect(1)]);
      await eventually(() => spansOf(traceId(8)).some((s) => s.name === 'bayou.ack'), 2000, 'the ack span');
      const ack = spansOf(traceId(8)).find((s) => s.name === 'bayou.ack') as ReadableSpan;
      expect(parentOf(ack)).toBe(delivers[0]?.spanContext().spanId);
      expect(ack.attributes['bayou.client']).toBe(clientId);
      expect(ack.attributes['bayou.batch']).toBe(1);
    } finally {
      await server.close();
    }
  });
});

requireRedis('tracing through two nodes on Redis');

describe('tracing through two nodes on Redis', () => {
  const redis = redisPerFile();
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster(redis(), 2, {}, (server, i) => {
      if (i === 0)
        void server.app.register(publishApi, {
          apiKey: KEY,
          publish: (c: string, d: unknown, t?: string) =>
            server.bayou.publish(c, d, t === undefined ? undefined : { traceparent: t }),
        });
    });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('a publish on one node with ext.traceparent is delivered on both under one trace id: publish, engine, a delivery span per node', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const subA = await subscribed(a.base, '/t/redis');
    const subB = await subscribed(b.base, '/t/redis');
    const pub = new TestClient(a.base, 'websocket');
    await pub.connect();
    const reply = await pub.request({
      channel: '/t/redis',
      clientId: pub.clientId,
      data: { n: 2 },
      ext: { traceparent: traceparent(2) },
    });
    expect(reply.successful).toBe(true);
    await subB.waitFor((m: Msg) => m.channel === '/t/redis');
    await subA.waitFor((m: Msg) => m.channel === '/t/redis');
    const { publish, engine, delivers } = await chainOf(traceId(2), 2);
    const nodes = [publish, ...delivers].map((s) => s.attributes['bayou.node']);
    expect(nodes[0]).toBe(a.server.bayou.nodeId);
    expect(new Set(nodes.slice(1))).toEqual(new Set([a.server.bayou.nodeId, b.server.bayou.nodeId]));
    expect(engine.attributes['bayou.engine']).toMatch(/^redis:/);
    await Promise.all([subA.close(), subB.close(), pub.close()]);
  });

  it('POST /api/publish with a traceparent header continues that trace to the other node', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const sub = await subscribed(b.base, '/t/api');
    const res = await fetch(`${a.base}/api/publish`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${KEY}`,
        traceparent: traceparent(3),
      },
      body: JSON.stringify({ channel: '/t/api', data: 'x' }),
    });
    expect(res.status).toBe(200);
    await sub.waitFor((m: Msg) => m.channel === '/t/api');
    const { delivers } = await chainOf(traceId(3), 1);
    expect(delivers[0]?.attributes['bayou.node']).toBe(b.server.bayou.nodeId);
    await sub.close();
  });

  it('an untraced publish or an invalid traceparent makes no span, and the message is delivered as ever', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const sub = await subscribed(b.base, '/t/plain');
    const pub = new TestClient(a.base, 'websocket');
    await pub.connect();
    for (const ext of [
      undefined,
      { traceparent: '00-zz-nothex-01' },
      { traceparent: `00-${'0'.repeat(32)}-${parentId}-01` },
    ])
      await pub.request({ channel: '/t/plain', clientId: pub.clientId, data: 'p', ...(ext ? { ext } : {}) });
    // A traced one after them: once its delivery span is in, the earlier ones would be too.
    await pub.request({
      channel: '/t/plain',
      clientId: pub.clientId,
      data: 'last',
      ext: { traceparent: traceparent(4) },
    });
    await sub.waitFor((m: Msg) => m.channel === '/t/plain' && m.data === 'last');
    expect(sub.received.filter((m) => m.channel === '/t/plain')).toHaveLength(4);
    await chainOf(traceId(4), 1);
    expect(exporter.getFinishedSpans().map((s) => s.spanContext().traceId)).toEqual(
      Array(3).fill(traceId(4)),
    );
    await Promise.all([sub.close(), pub.close()]);
  });
});

describe('the Redis wire form', () => {
  it('carries a traced publication’s traceparent in the flag field, and nothing when untraced', () => {
    const traced = decodePublication(`n.1\n${traceparent(5)}\n/c\n\n\n{"channel":"/c","data":1}`);
    expect(traced?.publication.trace).toBe(traceparent(5));
    expect(traced?.publication.record).toBeUndefined();
    const plain = decodePublication('n.2\n\n/c\n\n\n{"channel":"/c","data":1}');
    expect(plain?.publication).toEqual({
      channel: '/c',
      payload: '{"channel":"/c","data":1}',
      position: null,
    });
    expect(decodePublication('n.3\nr\n/c\n\n\n{}')?.publication.record).toBe(true);
  });
});
