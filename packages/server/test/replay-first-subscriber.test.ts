/**
 * The race behind issue 26's lost message: a session that resumes (subscribe with
 * `ext.replay`) as the first subscriber of its channel on a node. The node subscribes to
 * the channel in Redis first; a live publication can reach the node as soon as Redis
 * confirms, before the replay extension starts holding live messages for the session.
 * That message then went out ahead of the recovered ones, and the client, which drops
 * anything at or before the last position it saw, took the recovered ones for
 * duplicates: lost, with no `gap`. Here node B sees many channels for the first time
 * while node A floods them; every resumed session must get the offsets right after its
 * position, in order, before any later one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { eventually, type Msg, TestClient } from './test-client.js';

requireRedis('replay as the first subscriber of a channel on a node');

const redis = redisPerFile();
let cluster: Cluster;

beforeAll(async () => {
  // History long enough that the flood never trims past the resume point, and sessions that
  // outlive a slow poll, however loaded the machine.
  cluster = await startCluster(redis(), 2, { historySize: 100_000, maxInterval: 30_000 });
}, 30_000);
afterAll(async () => {
  await cluster?.close();
});

const offsetOf = (m: Msg) =>
  ((m.ext as { replay?: { offset?: number } } | undefined)?.replay?.offset ?? -1) as number;

describe.each(['websocket', 'long-polling'] as const)(
  'replay as first subscriber on a node (%s)',
  (transport) => {
    it('delivers what was missed before any live message, in order, while the channel is flooded', async () => {
      const [a, b] = cluster.nodes as [Cluster['nodes'][number], Cluster['nodes'][number]];
      const channels = Array.from({ length: 40 }, (_, i) => `/race/${transport}/${i}`);
      // History on every channel; the resume point is the 3rd message.
      const from = new Map<string, { offset: number; epoch: string }>();
      for (const ch of channels) {
        for (let n = 0; n < 5; n++) {
          const p = await a.server.bayou.publish(ch, { n });
          if (n === 2 && p !== null) from.set(ch, p);
        }
      }
      // A flood on every channel from node A while node B's sessions resume on them.
      let flooding = true;
      const flood = (async () => {
        for (let n = 5; flooding; n++)
          await Promise.all(channels.map((ch) => a.server.bayou.publish(ch, { n })));
      })();
      const clients: TestClient[] = [];
      try {
        await Promise.all(
          channels.map(async (ch) => {
            const c = new TestClient(b.base, transport);
            clients.push(c);
            await c.connect({ replay: true });
            const reply = await c.request({
              channel: '/meta/subscribe',
              clientId: c.clientId,
              subscription: ch,
              ext: { replay: { [ch]: from.get(ch) } },
            });
            expect({ successful: reply.successful, error: reply.error }).toEqual({
              successful: true,
              error: undefined,
            });
          }),
        );
        for (const c of clients) await eventually(() => c.deliveries('/race/').length >= 10, 10_000);
      } finally {
        flooding = false;
        await flood;
        for (const c of clients) await c.close();
      }
      for (const [i, c] of clients.entries()) {
        const ch = String(c.deliveries('/race/')[0]?.channel);
        const start = (from.get(ch)?.offset ?? 0) + 1;
        // Nothing may come ahead of an older offset, and nothing twice (a live copy of a
        // recovered message arriving late is dropped: replay-late-live.test.ts).
        const offsets = c.deliveries('/race/').map(offsetOf).slice(0, 10);
        expect({ client: i, offsets }).toEqual({
          client: i,
          offsets: Array.from({ length: 10 }, (_, k) => start + k),
        });
      }
    }, 60_000);
  },
);
