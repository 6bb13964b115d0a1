/**
 * Webhooks from three nodes on one Redis: `channel.occupied` / `channel.vacated` once per
 * cluster-wide transition however the subscribers are spread, and `vacated` after a node
 * died holding the last subscribers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, type Node, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { eventually } from './interop-helpers.js';
import { TestClient, type Transport } from './test-client.js';
import { WebhookReceiver } from './webhook-receiver.js';

requireRedis('webhooks on a cluster');

const SECRET = 'cluster-webhook-secret';
const redis = redisPerFile();
let cluster: Cluster | null = null;
let receiver: WebhookReceiver | null = null;
const clients: TestClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await cluster?.close();
  await receiver?.stop();
  cluster = null;
  receiver = null;
});

async function start(): Promise<{ nodes: Node[]; hooks: WebhookReceiver }> {
  const hooks = new WebhookReceiver(SECRET);
  await hooks.start();
  receiver = hooks;
  cluster = await startCluster(redis(), 3, {
    webhooks: { url: hooks.url, secret: SECRET, batchWindow: 10, deadNodeSweep: 100 },
  });
  return { nodes: cluster.nodes, hooks };
}

async function client(node: Node, transport: Transport): Promise<TestClient> {
  const c = new TestClient(node.base, transport);
  clients.push(c);
  expect((await c.connect()).successful).toBe(true);
  return c;
}

/** Closes the cluster gracefully: every node delivers what it still queued before it goes. */
async function closeCluster(): Promise<void> {
  for (const c of clients.splice(0)) await c.close();
  await cluster?.close();
  cluster = null;
}

const ofChannel = (hooks: WebhookReceiver, type: string, channel: string) =>
  hooks.unique(type).filter((e) => e.channel === channel);

describe('webhooks on three nodes', () => {
  it('reports occupied and vacated exactly once per transition with subscribers spread over 3 nodes', async () => {
    const { nodes, hooks } = await start();
    const subscribers: TestClient[] = [];
    for (const node of nodes) {
      subscribers.push(await client(node, 'websocket'), await client(node, 'long-polling'));
    }
    const rounds = ['/room/1', '/room/2', '/room/3', '/room/1'];
    for (const [r, channel] of rounds.entries()) {
      // Every node gets its first subscriber at the same moment.
      await Promise.all(subscribers.map((c) => c.subscribe(channel)));
      await eventually(() => ofChannel(hooks, 'channel.occupied', channel).length >= (r === 3 ? 2 : 1));
      await Promise.all(subscribers.map((c) => c.unsubscribe(channel)));
      await eventually(() => ofChannel(hooks, 'channel.vacated', channel).length >= (r === 3 ? 2 : 1));
    }
    await closeCluster();
    expect(hooks.posts.every((p) => p.valid)).toBe(true);
    for (const channel of ['/room/2', '/room/3']) {
      expect(ofChannel(hooks, 'channel.occupied', channel)).toHaveLength(1);
      expect(ofChannel(hooks, 'channel.vacated', channel)).toHaveLength(1);
    }
    // /room/1 was occupied twice: occupied, vacated, occupied, vacated, in that order.
    const room1 = hooks
      .unique()
      .filter((e) => e.channel === '/room/1')
      .sort((a, b) => a.at - b.at)
      .map((e) => e.type);
    expect(room1).toEqual(['channel.occupied', 'channel.vacated', 'channel.occupied', 'channel.vacated']);
    expect(hooks.unique('session.connected')).toHaveLength(6);
  }, 30_000);

  it('reports vacated once after the node holding the last subscribers dies', async () => {
    const { nodes, hooks } = await start();
    const [n0, n1] = nodes as [Node, Node, Node];
    const onDying = await client(n0, 'websocket');
    const onLiving = await client(n1, 'websocket');
    await onDying.subscribe('/room/dead');
    await onLiving.subscribe('/room/dead');
    await eventually(() => ofChannel(hooks, 'channel.occupied', '/room/dead').length === 1);
    await onLiving.unsubscribe('/room/dead');
    const killedAt = Date.now();
    await cluster?.kill(n0);
    await eventually(() => ofChannel(hooks, 'channel.vacated', '/room/dead').length === 1, 10_000);
    // nodeTtlMs (1 s here) for the death to show, then one sweep (100 ms here).
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    await closeCluster();
    expect(ofChannel(hooks, 'channel.occupied', '/room/dead')).toHaveLength(1);
    expect(ofChannel(hooks, 'channel.vacated', '/room/dead')).toHaveLength(1);
  }, 30_000);
});
