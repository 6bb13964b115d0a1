/**
 * Without an OpenTelemetry SDK a `traceparent` costs nothing and goes nowhere: the node has
 * no tracer, the Redis wire form of the publication is the untraced one (empty flag field),
 * and the subscriber gets the message as ever.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../src/index.js';
import { tracingInstalled } from '../src/kernel/message-tracing.js';
import { redisPerFile, requireRedis } from './cluster-helpers.js';
import { eventually, type Msg, TestClient } from './test-client.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

requireRedis('tracing off');

describe('tracing off (no OpenTelemetry SDK)', () => {
  const redis = redisPerFile();
  const keyPrefix = `off${process.pid}:`;
  let server: BayouServer;
  let base: string;
  let spy: Redis;
  const wire: string[] = [];

  beforeAll(async () => {
    server = await createServer({
      host: '127.0.0.1',
      port: 0,
      redis: redis().url,
      redisEngine: { keyPrefix },
    });
    base = await server.listen();
    spy = new Redis(redis().url);
    spy.on('pmessage', (_p: string, topic: string, message: string) => {
      if (topic === `${keyPrefix}{/off/chat}`) wire.push(message);
    });
    await spy.psubscribe(`${keyPrefix}*`);
  });
  afterAll(async () => {
    spy?.disconnect();
    await server?.close();
  });

  it('builds no tracer, and a publish with ext.traceparent crosses Redis and reaches the subscriber untraced', async () => {
    expect(tracingInstalled()).toBe(false);
    const sub = new TestClient(base, 'websocket');
    await sub.connect();
    expect((await sub.subscribe('/off/chat')).successful).toBe(true);
    const pub = new TestClient(base, 'websocket');
    await pub.connect();
    const reply = await pub.request({
      channel: '/off/chat',
      clientId: pub.clientId,
      data: 'x',
      ext: { traceparent: TRACEPARENT },
    });
    expect(reply.successful).toBe(true);
    const got = await sub.waitFor((m: Msg) => m.channel === '/off/chat');
    expect(got).toEqual({ channel: '/off/chat', data: 'x' });
    await eventually(() => wire.length === 1, 2000, 'the publication on the Redis topic');
    const [, flag, channel] = (wire[0] as string).split('\n');
    expect(channel).toBe('/off/chat');
    expect(flag).toBe('');
    expect(wire[0]).not.toContain('traceparent');
    expect(wire[0]).not.toContain('4bf92f35');
    await Promise.all([sub.close(), pub.close()]);
  });
});
