/**
 * The race behind the duplicate seen when clients resume after a node died: a message is
 * both in the history a resuming subscribe fetches and, late, on the node's Redis pub/sub
 * connection. Redis answers the history read on the command connection and writes the
 * pub/sub copy on the subscriber connection; the node may read the first before the
 * second, so the copy can come in after the replay extension released its held messages.
 * The session then got that message twice, which a client resuming with positions (a plain
 * Bayeux client with ack + replay) takes as a second message. Here the race is driven: the
 * node's subscriber socket is paused while the message is published and recovered, and
 * resumed afterwards.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { eventually, type Msg, TestClient } from './test-client.js';

requireRedis('a live copy arriving after its recovery from history');

const redis = redisPerFile();
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster(redis(), 2, { historySize: 1000 });
}, 30_000);
afterAll(async () => {
  await cluster?.close();
});

const nOf = (m: Msg) => (m.data as { n: number }).n;

describe.each(['websocket', 'long-polling'] as const)(
  'a late live copy of a recovered message (%s)',
  (transport) => {
    it('reaches a resumed session once', async () => {
      const [a, b] = cluster.nodes as [Cluster['nodes'][number], Cluster['nodes'][number]];
      const channel = `/late/${transport}`;
      // Node B already follows the channel (as the node a client moves to usually does), so
      // the resuming subscribe needs no SUBSCRIBE on the paused connection.
      const watcher = new TestClient(b.base, transport);
      const resumed = new TestClient(b.base, transport);
      try {
        await watcher.connect();
        expect((await watcher.subscribe(channel)).successful).toBe(true);
        const from = await a.server.bayou.publish(channel, { n: 1 });
        await a.server.bayou.publish(channel, { n: 2 });
        await watcher.waitFor((m) => m.channel === channel && nOf(m) === 2);

        const sub = (b.engine.sub as unknown as { stream: Socket }).stream;
        sub.pause();
        let paused = true;
        try {
          // In history at once; its pub/sub copy waits in node B's socket.
          await a.server.bayou.publish(channel, { n: 3 });
          expect((await resumed.connect({ replay: true })).successful).toBe(true);
          const reply = await resumed.request({
            channel: '/meta/subscribe',
            clientId: resumed.clientId,
            subscription: channel,
            ext: { replay: { [channel]: from } },
          });
          expect(reply.successful).toBe(true);
          expect(
            (reply.ext as { replay: Record<string, { recovered: boolean }> }).replay[channel]?.recovered,
          ).toBe(true);
          await resumed.waitFor((m) => m.channel === channel && nOf(m) === 3);
          sub.resume();
          paused = false;
        } finally {
          if (paused) sub.resume();
        }
        // The late copy of 3 comes in before 4 on the same connection: once 4 is in, it is too.
        await a.server.bayou.publish(channel, { n: 4 });
        await resumed.waitFor((m) => m.channel === channel && nOf(m) === 4);
        await eventually(() => expect(watcher.deliveries(channel).map(nOf)).toEqual([1, 2, 3, 4]));
        expect(resumed.deliveries(channel).map(nOf)).toEqual([2, 3, 4]);
      } finally {
        await watcher.close();
        await resumed.close();
      }
    });
  },
);
