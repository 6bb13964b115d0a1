/**
 * The official CometD client (`cometd@9` in Node through `cometd-nodejs-client`) over
 * long-polling against three nodes on one Redis behind the round-robin balancer: every
 * request lands on the next node, and 100 messages arrive in order, none lost; a node
 * shut down gracefully ends its session with 402 and handshake advice, which CometD follows
 * onto another node. In its own file because `adapt()` installs a global `window`.
 */
import { CometD, type Message } from 'cometd';
import { adapt } from 'cometd-nodejs-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, eventually, redisPerFile, requireRedis, startCluster } from './cluster-helpers.js';
import { within as replyWithin } from './interop-helpers.js';

adapt();
requireRedis('cluster with the CometD client');

const REPLY_MS = 5000;

const within = <T>(promise: Promise<T>, what: string): Promise<T> => replyWithin(promise, REPLY_MS, what);

const redis = redisPerFile();
let cluster: Cluster | null = null;
let cometd: CometD | null = null;

afterEach(async () => {
  if (cometd !== null && !cometd.isDisconnected()) {
    const c = cometd;
    await within(new Promise((resolve) => c.disconnect(resolve)), 'disconnect').catch(() => undefined);
  }
  cometd = null;
  await cluster?.close();
  cluster = null;
});

describe('the CometD client through a round-robin balancer (no affinity)', () => {
  it('handshakes, subscribes, publishes and receives 100 messages in order over long-polling, each request on the next node', async () => {
    cluster = await startCluster(redis());
    const c = new CometD();
    cometd = c;
    for (const type of c.getTransportTypes()) if (type !== 'long-polling') c.unregisterTransport(type);
    c.configure({ url: cluster.url, logLevel: 'warn', backoffIncrement: 100 });

    const handshake = await within(new Promise<Message>((resolve) => c.handshake(resolve)), 'handshake');
    expect(handshake.successful).toBe(true);
    const got: number[] = [];
    const subscribed = await within(
      new Promise<Message>((resolve) =>
        c.subscribe('/stream/cometd', (m) => got.push((m.data as { n: number }).n), resolve),
      ),
      'subscribe',
    );
    expect(subscribed.successful).toBe(true);
    const from = cluster.balancer.order.length;
    for (let n = 0; n < 100; n++) {
      const ack = await within(
        new Promise<Message>((resolve) => c.publish('/stream/cometd', { n }, resolve)),
        `publish ${n}`,
      );
      expect(ack.successful).toBe(true);
    }
    // One more on the same channel: once it is in, a late copy of an earlier one would be too.
    c.publish('/stream/cometd', { n: 100 });
    await eventually(() => expect(got.at(-1)).toBe(100));
    expect(got).toEqual(Array.from({ length: 101 }, (_, i) => i));
    expect(c.getTransport()?.type).toBe('long-polling');

    // Every request went to a different node than the one before, and each node served its share.
    const window = cluster.balancer.order.slice(from);
    expect(window.length).toBeGreaterThanOrEqual(100);
    expect(cluster.balancer.alternates(from)).toBe(true);
    for (const node of cluster.nodes) {
      expect(window.filter((name) => name === node.name).length).toBeGreaterThan(window.length / 4);
    }
  });
});

describe('the CometD client when its node shuts down gracefully', () => {
  it('carries on with the same session on another node: handed over through Redis, no new handshake, nothing lost', async () => {
    cluster = await startCluster(redis(), 3, { historySize: 100 });
    const c = new CometD();
    cometd = c;
    for (const type of c.getTransportTypes()) if (type !== 'long-polling') c.unregisterTransport(type);
    c.configure({ url: cluster.url, logLevel: 'warn', backoffIncrement: 100 });
    const sessions: string[] = [];
    const got: number[] = [];
    c.addListener('/meta/handshake', (m) => {
      if (m.successful !== true) return;
      sessions.push(String(m.clientId));
      c.subscribe('/stream/moved', (msg) => got.push((msg.data as { n: number }).n));
    });
    await within(new Promise<Message>((resolve) => c.handshake(resolve)), 'handshake');
    const publisher = cluster.nodes[0] as (typeof cluster.nodes)[number];
    await eventually(async () => {
      await publisher.server.bayou.publish('/stream/moved', { n: 0 });
      expect(got).toContain(0);
    });
    const ownerId = (sessions[0] as string).split('.')[0];
    const owner = cluster.nodes.find(
      (n) => n.server.bayou.nodeId === ownerId,
    ) as (typeof cluster.nodes)[number];
    const live = cluster.nodes.find((n) => n !== owner) as (typeof cluster.nodes)[number];
    cluster.balancer.remove(owner.name);
    await owner.server.close();
    expect(owner.server.bayou.stats().removed.handover).toBe(1);
    // Published while no node serves the session: the adopter recovers it from history.
    await live.server.bayou.publish('/stream/moved', { n: 1 });
    await eventually(async () => {
      await live.server.bayou.publish('/stream/moved', { n: 2 });
      expect(got).toContain(2);
    });
    // (0 and 2 were published until they came in: 1, once, between them.)
    expect(got.filter((n) => n !== 0 && n !== 2)).toEqual([1]);
    expect(got.indexOf(1)).toBeLessThan(got.indexOf(2));
    expect(sessions).toHaveLength(1);
    expect(c.getClientId()).toBe(sessions[0]);
    expect(c.isDisconnected()).toBe(false);
  });
});
