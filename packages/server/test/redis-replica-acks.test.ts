/**
 * `replicaAcks`: a publish is acknowledged only once a replica holds it. A primary and its
 * replica (real redis-server processes); the replica is then promoted the way Sentinel
 * does it (`REPLICAOF NO ONE`) while the node is still connected to the old primary, which
 * keeps accepting writes. A publish the old primary takes then never reaches the new one:
 * with `replicaAcks: 1` it is refused with 503 (publish again) instead of acknowledged and
 * lost; with `replicaAcks: 0` it is acknowledged and absent from the promoted replica.
 */
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from '../src/index.js';
import { eventually, redisAvailable, requireRedis } from './cluster-helpers.js';
import { primaryWithReplica } from './redis-server.js';
import { TestClient } from './test-client.js';

requireRedis('Redis engine replicaAcks');

const CHANNEL = '/replicated/prices';

describe.runIf(redisAvailable)('Redis engine replicaAcks', () => {
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  const pair = () => primaryWithReplica(cleanup);

  async function node(port: number, replicaAcks: number) {
    const keyPrefix = `ra${process.pid}x${replicaAcks}:`;
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      logger: false,
      redis: `redis://127.0.0.1:${port}`,
      redisEngine: { keyPrefix, replicaAcks, replicaAckTimeoutMs: 2000, commandTimeoutMs: 5000 },
    });
    cleanup.push(() => server.close());
    const base = await server.listen();
    const [publisher, subscriber] = [new TestClient(base, 'websocket'), new TestClient(base, 'websocket')];
    for (const c of [publisher, subscriber]) {
      cleanup.push(() => c.close());
      await c.connect();
    }
    expect((await subscriber.subscribe(CHANNEL)).successful).toBe(true);
    return { server, publisher, subscriber, keyPrefix };
  }

  /** How many publishes the promoted replica holds in the channel's history stream. */
  async function heldBy(r: Redis, keyPrefix: string): Promise<number> {
    const keys = await r.keys(`${keyPrefix}*`);
    let n = 0;
    for (const k of keys) if ((await r.type(k)) === 'stream') n += await r.xlen(k);
    return n;
  }

  it.each([
    [1, 'refused with 503 (publish again)'],
    [0, 'acknowledged, and lost with the old primary'],
  ])('replicaAcks %i: a publish to a primary whose replica was just promoted is %s', async (acks) => {
    const { primary, onReplica } = await pair();
    const { server, publisher, subscriber, keyPrefix } = await node(primary.port, acks);
    // In sync: acknowledged, delivered, and held by the replica.
    const first = await publisher.publish(CHANNEL, { n: 1 });
    expect(first.successful, String(first.error)).toBe(true);
    await server.bayou.publish(CHANNEL, { n: 2 });
    await eventually(() => expect(subscriber.deliveries(CHANNEL).length).toBe(2));
    await eventually(async () => expect(await heldBy(onReplica, keyPrefix)).toBe(2));

    // Promoted as Sentinel promotes; the node still writes to the old primary.
    await onReplica.call('REPLICAOF', 'NO', 'ONE');
    const reply = await publisher.publish(CHANNEL, { n: 3 });
    const api = await server.bayou.publish(CHANNEL, { n: 4 }).then(
      () => 'acknowledged',
      (err: Error) => err.message,
    );
    if (acks === 1) {
      expect(reply.successful).toBe(false);
      expect(String(reply.error)).toMatch(/^503::/);
      expect(api).toMatch(/replica/);
    } else {
      expect(reply.successful).toBe(true);
      expect(api).toBe('acknowledged');
    }
    // Either way the promoted replica never got them: only a refusal tells the truth.
    expect(await heldBy(onReplica, keyPrefix)).toBe(2);
  });
});
