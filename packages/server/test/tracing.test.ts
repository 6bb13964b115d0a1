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
