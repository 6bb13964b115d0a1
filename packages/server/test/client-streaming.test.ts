/**
 * `@bayou/client`'s `streaming` transport against the real server, one node and three nodes
 * behind the round-robin balancer: a numbered stream arrives exactly once and in order
 * through recycles (a small `streamMaxBytes`) and through every connection being cut
 * mid-flight. The two sides of the wire contract (docs/streaming.md) meet here.
 */
import { BayouClient, streaming } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { BayouServer } from '../src/index.js';
import {
  type Cluster,
  disconnectAll,
  eventually,
  redisPerFile,
  requireRedis,
  startCluster,
} from './cluster-helpers.js';
import { type Started, startServer } from './start-server.js';

const clients: BayouClient[] = [];
let single: Started | null = null;
let cluster: Cluster | null = null;

afterEach(async () => {
  await disconnectAll(clients);
  await single?.server.close();
  single = null;
  await cluster?.close();
  cluster = null;
});

/** Subscribes a streaming client to `channel`; resolves with what it receives and the transports it used. */
async function subscriber(url: string, channel: string): Promise<{ got: number[]; transports: string[] }> {
  const client = new BayouClient(url, { transports: [streaming], minReconnectDelay: 20 });
  clients.push(client);
  const got: number[] = [];
  const transports: string[] = [];
  client.on('transport', (t) => transports.push(String(t)));
  const sub = client.subscribe(channel, (m) => got.push((m.data as { n: number }).n));
  await client.connect();
  await sub.ready;
  return { got, transports };
}

/** Publishes 0…count-1 on `channel` from `server`, one per turn, cutting every connection at `cutAt`. */
async function publishAll(server: BayouServer, channel: string, count: number, cutAt: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    if (n === cutAt) server.app.server.closeAllConnections();
    await server.bayou.publish(channel, { n, pad: 'x'.repeat(200) });
    await new Promise((r) => setImmediate(r));
  }
}

describe('@bayou/client over streaming against the server', () => {
  it('one node: every message once and in order, through recycles and a cut', async () => {
    single = await startServer({ streamMaxBytes: 8192 });
    const { got, transports } = await subscriber(`${single.base}/bayeux`, '/e2e');
    await publishAll(single.server, '/e2e', 200, 100);
    await eventually(() => got.length >= 200, 15_000);
    expect(got).toEqual([...Array(200).keys()]);
    expect(transports.every((t) => t === 'streaming')).toBe(true);
  });
});

requireRedis('@bayou/client streaming on a cluster');
const redis = redisPerFile();

describe('@bayou/client over streaming on three nodes behind the round-robin balancer', () => {
  it('every message once and in order, streams relayed or not, through recycles and a cut', async () => {
    cluster = await startCluster(redis(), 3, { streamMaxBytes: 8192 });
    const { got } = await subscriber(cluster.url, '/e2e');
    const publisher = cluster.nodes[2] as Cluster['nodes'][0];
    await publishAll(publisher.server, '/e2e', 200, 100);
    await eventually(() => got.length >= 200, 20_000);
    expect(got).toEqual([...Array(200).keys()]);
  });
});
