/**
 * Streams on a cluster of three nodes on a real Redis, no affinity: a stream request that
 * lands on a node not owning its session is relayed to the owner (cluster/stream-relay.ts).
 * Each request below is sent to a chosen node, so every case is the one it names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, eventually, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import {
  cookieOf,
  openEventSource,
  openStream,
  type StreamReader,
  streamConnect,
  streamingClient,
} from './stream-client.js';
import { type Msg, TestClient } from './test-client.js';

requireRedis('streams on a cluster');
const redis = redisPerFile();
let cluster: Cluster | null = null;
const streams: StreamReader[] = [];

afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await cluster?.close();
  cluster = null;
});

/** The same session's POSTs, sent to another node. */
function via(base: string, client: TestClient): TestClient {
  const other = new TestClient(base, 'long-polling');
  other.clientId = client.clientId;
  other.cookie = client.cookie;
  return other;
}

async function stream(
  base: string,
  client: TestClient,
  ext?: Record<string, unknown>,
): Promise<StreamReader> {
  const reader = await openStream(base, streamConnect(client, ext), cookieOf(client));
  streams.push(reader);
  await reader.waitFor((m) => m.channel === '/meta/connect');
  return reader;
}

const data = (reader: StreamReader, channel: string): unknown[] =>
  reader.messages.filter((m) => m.channel === channel && m.successful === undefined).map((m) => m.data);

describe('a stream on a node that does not own its session', () => {
  it('is relayed: it opens with the owner connect reply and carries every delivery, in order', async () => {
    cluster = await startCluster(redis());
    const [a, b, c] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base);
    expect((await via(c.base, client).subscribe('/relay')).successful).toBe(true);
    const reader = await stream(b.base, client);
    expect(reader.lines[0]).toBe(' '.repeat(2048));
    expect(reader.frames[0]?.[0]).toMatchObject({ channel: '/meta/connect', id: 'open', successful: true });
    for (let n = 0; n < 50; n++) await via(c.base, client).publish('/relay', n);
    await reader.until(() => data(reader, '/relay').length === 50);
    expect(data(reader, '/relay')).toEqual([...Array(50).keys()]);
    // The POSTs of the session answer without its deliveries: they come on the stream only.
    expect(client.deliveries('/relay')).toEqual([]);
  });

  it('resends, after a cut, the numbered frames the client did not report, once', async () => {
    cluster = await startCluster(redis());
    const [a, b, c] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base, 'streaming', { ack: true, bayou: { ackFrames: true } });
    await client.subscribe('/acked');
    const first = await stream(b.base, client);
    await a.server.bayou.publish('/acked', 'one');
    await first.waitFor((m) => m.data === 'one');
    const marker = first.frames.at(-1)?.at(-1) as Msg;
    expect(marker.channel).toBe('/meta/ack');
    const reported = (marker.ext as { ack: number }).ack;
    await a.server.bayou.publish('/acked', 'two');
    await first.waitFor((m) => m.data === 'two');
    first.cut();
    await first.ended;
    await a.server.bayou.publish('/acked', 'three');
    // Reports 'one' only, as if 'two' had been lost with the stream; opens on the third node.
    const second = await stream(c.base, client, { ack: reported });
    await second.until(() => data(second, '/acked').includes('three'));
    expect(data(second, '/acked')).toEqual(['two', 'three']);
  });

  it('resends after a cut as well when the client reports in ext.ackFrames (as @bayou/client does)', async () => {
    cluster = await startCluster(redis());
    const [a, b, c] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base, 'streaming', { ack: true, bayou: { ackFrames: true } });
    await client.subscribe('/frames');
    const first = await stream(b.base, client);
    await a.server.bayou.publish('/frames', 1);
    await first.waitFor((m) => m.data === 1);
    const marker = first.frames.at(-1)?.at(-1) as Msg;
    const reported = (marker.ext as { ack: number }).ack;
    await a.server.bayou.publish('/frames', 2);
    await first.waitFor((m) => m.data === 2);
    first.cut();
    const second = await stream(c.base, client, { ackFrames: reported });
    await second.until(() => data(second, '/frames').includes(2));
    expect(data(second, '/frames')).toEqual([2]);
  });

  it('is recycled past streamMaxAge without losing what is published meanwhile', async () => {
    cluster = await startCluster(redis(), 3, { streamMaxAge: 1000 });
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base);
    await client.subscribe('/age');
    const first = await stream(b.base, client);
    await a.server.bayou.publish('/age', 1);
    await first.ended;
    expect(first.frames.at(-1)).toEqual([
      {
        channel: '/meta/connect',
        clientId: client.clientId,
        successful: true,
        advice: { reconnect: 'retry', interval: 0 },
      },
    ]);
    await a.server.bayou.publish('/age', 2);
    const second = await stream(b.base, client);
    await second.until(() => data(second, '/age').includes(2));
    expect([...data(first, '/age'), ...data(second, '/age')]).toEqual([1, 2]);
  });

  it('ends when a newer stream of the session opens on the owner', async () => {
    cluster = await startCluster(redis());
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base);
    await client.subscribe('/newer');
    const relayed = await stream(b.base, client);
    const local = await stream(a.base, client);
    await relayed.ended;
    await a.server.bayou.publish('/newer', 'x');
    await local.waitFor((m) => m.data === 'x');
    expect(data(relayed, '/newer')).toEqual([]);
  });

  it('ends an older stream open on the owner when a newer one is relayed from another node', async () => {
    cluster = await startCluster(redis());
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base);
    await client.subscribe('/older');
    const local = await stream(a.base, client);
    const relayed = await stream(b.base, client);
    await local.ended;
    await a.server.bayou.publish('/older', 'x');
    await relayed.waitFor((m) => m.data === 'x');
    expect(data(local, '/older')).toEqual([]);
  });

  it('carries Faye EventSource events too, and ends with a 402 event when the owner dies', async () => {
    cluster = await startCluster(redis());
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const client = await streamingClient(a.base, 'eventsource');
    await client.subscribe('/es');
    const reader = await openEventSource(b.base, client.clientId, cookieOf(client));
    streams.push(reader);
    await eventually(() => a.server.bayou.session(client.clientId)?.transport === 'streaming');
    await a.server.bayou.publish('/es', 'hello');
    expect((await reader.waitFor((m) => m.channel === '/es')).data).toBe('hello');
    await cluster.kill(a);
    await reader.ended;
    expect(reader.frames.at(-1)?.[0]).toMatchObject({
      channel: '/meta/connect',
      successful: false,
      advice: { reconnect: 'handshake' },
    });
  });

  it('through the round-robin balancer: every stream and POST lands anywhere, nothing is lost', async () => {
    cluster = await startCluster(redis());
    const balancer = cluster.balancer.base;
    const client = await streamingClient(balancer);
    await client.subscribe('/rr');
    const readers: StreamReader[] = [];
    for (let round = 0; round < 3; round++) {
      const reader = await stream(balancer, client);
      readers.push(reader);
      for (let n = round * 10; n < round * 10 + 10; n++) await client.publish('/rr', n);
      await reader.until(() => data(reader, '/rr').length === 10);
    }
    expect(readers.flatMap((r) => data(r, '/rr'))).toEqual([...Array(30).keys()]);
  });
});
