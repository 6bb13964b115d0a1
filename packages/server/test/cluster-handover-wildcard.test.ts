/**
 * Wildcard subscriptions of sessions handed over at a drain (issue #35): two nodes on one
 * real Redis behind the round-robin balancer, each drained in turn and started again, while
 * a third node outside it publishes a numbered stream alternately on `/w/a` (matching both
 * `/w/*` and `/w/**`) and `/w/a/b` (matching `/w/**` only). Each client follows both
 * patterns: the node that adopts its session subscribes them again and recovers from
 * history what was published on their channels during the move, so every message arrives
 * exactly once — CometD with its ack extension, Faye and `@bayou/client`, over WebSocket and
 * long-polling — and no client handshakes again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually, numberedStream, redisPerFile, requireRedis } from './cluster-helpers.js';
import { describeOf, HandoverClients, handoverNodeOptions, type Subscriber } from './handover-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

requireRedis('wildcard subscriptions of sessions handed over');

const redis = redisPerFile();
const servers: BayouServer[] = [];
const clients = new HandoverClients();
let balancer: RoundRobinBalancer | null = null;

afterEach(async () => {
  await clients.close();
  await balancer?.close();
  balancer = null;
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

const PATTERNS = ['/w/*', '/w/**'];

describe('wildcard subscriptions of sessions handed over at a drain', () => {
  it('/w/* and /w/** carry on on the adopting node: every message on a matching channel once, no new handshake', async () => {
    const keyPrefix = `wildcard-${process.pid}:`;
    const options = (port: number) => handoverNodeOptions(port, redis().url, keyPrefix);
    const start = async (port: number) => {
      const server = await createServer(options(port));
      servers.push(server);
      return { server, port: Number(new URL(await server.listen()).port) };
    };
    const nodes = [await start(0), await start(0)];
    const publisher = (await start(0)).server;
    const rr = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    balancer = rr;
    const url = `${rr.base}/bayeux`;
    const subs: Subscriber[] = [
      await clients.cometd(url, 'long-polling', PATTERNS),
      await clients.cometd(url, 'websocket', PATTERNS),
      await clients.faye(url, 'long-polling', PATTERNS),
      await clients.bayou(url, 'long-polling', PATTERNS),
      await clients.bayou(url, 'websocket', PATTERNS),
    ];
    const stream = numberedStream((data) =>
      Promise.resolve(publisher.bayou.publish(data.n % 2 === 0 ? '/w/a' : '/w/a/b', data)),
    );
    await eventually(() => {
      for (const s of subs) expect(s.received.length, describeOf(s, stream.sent)).toBeGreaterThan(3);
    }, 10_000);
    let handedOver = 0;
    for (let i = 0; i < nodes.length; i++) {
      rr.remove(`node${i}`);
      const node = nodes[i] as { server: BayouServer; port: number };
      await node.server.close();
      handedOver += node.server.bayou.stats().removed.handover;
      nodes[i] = await start(node.port);
      rr.restore(`node${i}`);
      const mark = stream.sent;
      await eventually(() => {
        for (const s of subs)
          expect(Math.max(...s.received), describeOf(s, mark)).toBeGreaterThanOrEqual(mark);
      }, 10_000);
    }
    // A channel no message was on before the moves, matching both patterns: once too.
    await publisher.bayou.publish('/w/fresh', { n: await stream.stop() });
    const n = stream.sent + 1;
    await eventually(() => {
      for (const s of subs) expect(new Set(s.received).size, describeOf(s, n)).toBe(n);
    }, 10_000);
    const expected = Array.from({ length: n }, (_, i) => i);
    for (const s of subs) {
      expect(s.handshakes, describeOf(s, n)).toBe(1);
      expect(
        [...s.received].sort((a, b) => a - b),
        describeOf(s, n),
      ).toEqual(expected);
    }
    expect(handedOver).toBeGreaterThanOrEqual(subs.length);
  }, 30_000);
});
