/**
 * Per-turn batching through Redis: what a node publishes during one event-loop turn
 * leaves in one write and reaches each WebSocket subscriber in one frame, as with the
 * memory engine — also a batch bigger than Redis reads at once, which it writes back in
 * parts — each message once and in order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BayouServer } from '../src/index.js';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';
import { startServer } from './start-server.js';
import { type Msg, TestClient } from './test-client.js';

requireRedis('per-turn batching through Redis');

describe.runIf(redisAvailable)('per-turn batching through Redis', () => {
  const redis = redisPerFile();
  let server: BayouServer | null = null;
  let client: TestClient | null = null;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  async function subscribed(batchWindowMs?: number): Promise<{ server: BayouServer; client: TestClient }> {
    const started = await startServer({
      redis: redis().url,
      redisEngine: {
        keyPrefix: `batch${process.pid}:`,
        ...(batchWindowMs === undefined ? {} : { batchWindowMs }),
      },
    });
    server = started.server;
    client = new TestClient(started.base, 'websocket');
    await client.connect();
    await client.subscribe('/batch/a');
    // The first publish on a fresh Redis loads the script (NOSCRIPT, then EVAL) in a later turn.
    await client.drained((channel, data) => started.server.bayou.publish(channel, data));
    return { server: started.server, client };
  }

  /** Publishes `count` messages in one turn; resolves with the frames that carried them. */
  async function oneTurn(s: BayouServer, c: TestClient, count: number, size: number): Promise<Msg[][]> {
    const from = c.frames.length;
    const pad = 'x'.repeat(size);
    const acks: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) acks.push(s.bayou.publish('/batch/a', { i, pad }));
    await Promise.all(acks);
    await c.waitFor((m) => m.channel === '/batch/a' && (m.data as { i: number }).i === count - 1);
    return c.frames.slice(from).map((f) => f.filter((m) => m.channel === '/batch/a'));
  }

  it('delivers the publishes of one turn in one frame, each once and in order', async () => {
    const { server: s, client: c } = await subscribed();
    const frames = await oneTurn(s, c, 30, 50);
    expect(frames.filter((f) => f.length > 0).map((f) => f.length)).toEqual([30]);
    expect(frames.flat().map((m) => (m.data as { i: number }).i)).toEqual([...Array(30).keys()]);
  });

  it('holds a batch Redis wrote back in parts (past its 16 KB read) until the rest is back', async () => {
    // A generous window: a loaded test machine may pause Redis between two parts.
    const { server: s, client: c } = await subscribed(200);
    const frames = await oneTurn(s, c, 150, 400);
    expect(frames.filter((f) => f.length > 0).map((f) => f.length)).toEqual([150]);
    expect(frames.flat().map((m) => (m.data as { i: number }).i)).toEqual([...Array(150).keys()]);
  });
});
