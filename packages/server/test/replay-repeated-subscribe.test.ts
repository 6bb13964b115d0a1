/**
 * A subscribe sent again on the same session while the first is still being served (its
 * reply was lost with the request that carried it, and the client sent it anew): the
 * repeat is answered at once, and used to release the live messages held for the first
 * one ahead of the messages that one recovers from history; @bayou/client then dropped the
 * recovered ones as duplicates (lost, no `gap`). Over long-polling, whose requests run side
 * by side (a WebSocket's frames are handled one after another, so the repeat waits there).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { eventually, type Msg, TestClient } from './test-client.js';

requireRedis('a subscribe repeated while its history is fetched');

const redis = redisPerFile();
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster(redis(), 2, { historySize: 100_000, maxInterval: 30_000 });
}, 30_000);
afterAll(async () => {
  await cluster?.close();
});

const offsetOf = (m: Msg) =>
  ((m.ext as { replay?: { offset?: number } } | undefined)?.replay?.offset ?? -1) as number;

describe('a subscribe repeated on the same session (long-polling)', () => {
  it('keeps the recovered messages ahead of the live ones', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][number], Cluster['nodes'][number]];
    const channels = Array.from({ length: 30 }, (_, i) => `/again/${i}`);
    const from = new Map<string, { offset: number; epoch: string }>();
    for (const ch of channels) {
      for (let n = 0; n < 50; n++) {
        const p = await a.server.bayou.publish(ch, { n });
        if (n === 2 && p !== null) from.set(ch, p);
      }
    }
    let flooding = true;
    const flood = (async () => {
      for (let n = 50; flooding; n++)
        await Promise.all(channels.map((ch) => a.server.bayou.publish(ch, { n })));
    })();
    const clients: TestClient[] = [];
    try {
      await Promise.all(
        channels.map(async (ch) => {
          const c = new TestClient(b.base, 'long-polling');
          clients.push(c);
          await c.connect({ replay: true });
          const first = c.request({
            channel: '/meta/subscribe',
            clientId: c.clientId,
            subscription: ch,
            ext: { replay: { [ch]: from.get(ch) } },
          });
          const again = c.request({ channel: '/meta/subscribe', clientId: c.clientId, subscription: ch });
          await Promise.all([first, again]);
        }),
      );
      for (const c of clients) await eventually(() => c.deliveries('/again/').length >= 60, 10_000);
    } finally {
      flooding = false;
      await flood;
      for (const c of clients) await c.close();
    }
    for (const [i, c] of clients.entries()) {
      const ch = String(c.deliveries('/again/')[0]?.channel);
      const start = (from.get(ch)?.offset ?? 0) + 1;
      // In order and each once (a late live copy of a recovered one is dropped too).
      const offsets = c.deliveries('/again/').map(offsetOf).slice(0, 60);
      expect({ client: i, offsets }).toEqual({
        client: i,
        offsets: Array.from({ length: 60 }, (_, k) => start + k),
      });
    }
  }, 60_000);
});
