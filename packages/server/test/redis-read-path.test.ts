/**
 * How the Redis engine reads its two connections: every chunk Redis sends is handed to
 * ioredis' parser while the socket pushes it (Node's readable fast path), never buffered
 * and emitted a tick later through `read()` — on a fresh connection and after a reconnect,
 * whose socket is a new one. A publish's reply and its pub/sub copy are both read that way.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import type { Publication } from '../src/engine/engine.js';
import { RedisEngine } from '../src/engine/redis/index.js';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';

requireRedis('reading the Redis connections');

/** Chunks a socket emitted while pushing them (`direct`) or afterwards (`deferred`). */
interface Reads {
  direct: number;
  deferred: number;
}

/** Watches how `client`'s current socket hands its chunks on, from now. */
function watchReads(client: Redis): Reads {
  const reads: Reads = { direct: 0, deferred: 0 };
  const stream = client.stream;
  let pushing = false;
  const push = stream.push;
  stream.push = function (this: typeof stream, ...args: Parameters<typeof push>) {
    pushing = true;
    try {
      return push.apply(this, args);
    } finally {
      pushing = false;
    }
  };
  // Ahead of ioredis' own parser: this listener sees each chunk first.
  stream.prependListener('data', () => {
    if (pushing) reads.direct++;
    else reads.deferred++;
  });
  return reads;
}

describe.runIf(redisAvailable)('reading the Redis connections', () => {
  const redis = redisPerFile();
  const engines: RedisEngine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close().catch(() => undefined);
  });

  async function started(): Promise<{ engine: RedisEngine; received: Publication[] }> {
    const received: Publication[] = [];
    const engine = new RedisEngine({
      url: redis().url,
      keyPrefix: `reads${process.pid}:`,
      commandTimeoutMs: 2000,
    });
    engines.push(engine);
    await engine.start({ nodeId: `reads-${engines.length}`, deliver: (p) => received.push(p) });
    await engine.broker.subscribe('/reads');
    return { engine, received };
  }

  /** Publishes `count` times, one turn each, and waits for every copy to come back. */
  async function publishAndReceive(engine: RedisEngine, received: Publication[], count: number, tag: string) {
    for (let i = 0; i < count; i++)
      await engine.broker.publish('/reads', `{"${tag}":${i}}`, { size: 0, ttlMs: 0 });
    await eventually(() => expect(received.filter((p) => p.payload.includes(tag)).length).toBe(count));
  }

  it('hands every reply and every pub/sub message to the parser as it is read', async () => {
    const { engine, received } = await started();
    const cmd = watchReads(engine.cmd as Redis);
    const sub = watchReads(engine.sub as Redis);
    await publishAndReceive(engine, received, 20, 'fresh');
    expect(cmd.deferred).toBe(0);
    expect(sub.deferred).toBe(0);
    expect(cmd.direct).toBeGreaterThan(0);
    expect(sub.direct).toBeGreaterThan(0);
  });

  it('reads the new socket the same way after a reconnect', async () => {
    const { engine, received } = await started();
    const admin = new Redis(redis().url);
    try {
      const reconnects = engine.stats.reconnects;
      await admin.client('KILL', 'TYPE', 'pubsub');
      await admin.client('KILL', 'ID', String(await (engine.cmd as Redis).client('ID')));
      await eventually(() => {
        expect(engine.stats.reconnects).toBeGreaterThanOrEqual(reconnects + 2);
        expect(engine.ready()).toBe(true);
      });
    } finally {
      admin.disconnect();
    }
    // The catch-up after the reconnect may still run: publish once it lets publishes through.
    await eventually(() => engine.broker.publish('/reads', '{"warm":1}', { size: 0, ttlMs: 0 }));
    const cmd = watchReads(engine.cmd as Redis);
    const sub = watchReads(engine.sub as Redis);
    await publishAndReceive(engine, received, 20, 'again');
    expect(cmd.deferred).toBe(0);
    expect(sub.deferred).toBe(0);
    expect(cmd.direct).toBeGreaterThan(0);
    expect(sub.direct).toBeGreaterThan(0);
  });
});
