/**
 * While Redis is away, sessions stay alive: a long-poll that another node cannot forward
 * to its session's owner is answered 503 (send it again), not `402::session_unknown`,
 * which made the client drop a living session; and a resuming subscribe whose history
 * cannot be read fails with `503::engine_unavailable`, an error a client retries, not
 * `500::internal_error`. Both came out of `bayou-loadtest chaos --cluster` with a Redis
 * restart: long-polling clients whose subscription ended up refused or never resent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, eventually, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { TestClient } from './test-client.js';

requireRedis('sessions while Redis is away');

const redis = redisPerFile();
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster(redis(), 2, { maxInterval: 30_000 });
}, 30_000);
afterAll(async () => {
  await cluster?.close();
});

async function post(base: string, messages: object[]): Promise<{ status: number; body: string }> {
  const r = await fetch(`${base}/bayeux`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(messages),
  });
  return { status: r.status, body: await r.text() };
}

describe('while Redis is away', () => {
  it('answers a long-poll it cannot forward 503, and a resuming subscribe 503::engine_unavailable', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][number], Cluster['nodes'][number]];
    const channel = '/outage/news';
    const position = await a.server.bayou.publish(channel, { n: 0 });
    const watcher = new TestClient(a.base, 'long-polling');
    await watcher.connect({ replay: true });
    expect(await watcher.subscribe(channel)).toMatchObject({ successful: true }); // node A follows the channel
    const resuming = new TestClient(a.base, 'long-polling');
    await resuming.connect({ replay: true });
    // The handshake answer names node A; a request for it through node B is forwarded.
    expect(b.server.bayou.session(resuming.clientId)).toBeUndefined();
    try {
      await redis().kill();
      await eventually(() => expect(b.engine.ready()).toBe(false), 10_000);
      await eventually(() => expect(a.engine.ready()).toBe(false), 10_000);
      const relayed = await post(b.base, [
        { channel: '/meta/subscribe', clientId: resuming.clientId, subscription: '/outage/other', id: '1' },
      ]);
      expect({ status: relayed.status, body: relayed.body }).toEqual({
        status: 503,
        body: '{"error":"the engine is unavailable: send the request again"}',
      });
      const reply = await resuming.request({
        channel: '/meta/subscribe',
        clientId: resuming.clientId,
        subscription: channel,
        ext: { replay: { [channel]: position } },
      });
      expect({ successful: reply.successful, error: reply.error }).toEqual({
        successful: false,
        error: '503::engine_unavailable',
      });
    } finally {
      await redis().restart();
      await watcher.close();
      await resuming.close();
    }
    // Redis back: the same session subscribes through node B.
    await eventually(() => expect(a.engine.ready() && b.engine.ready()).toBe(true), 15_000);
    await eventually(async () => {
      const again = await post(b.base, [
        { channel: '/meta/subscribe', clientId: resuming.clientId, subscription: '/outage/other', id: '2' },
      ]);
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body)).toMatchObject([{ successful: true }]);
    }, 15_000);
  }, 60_000);
});
