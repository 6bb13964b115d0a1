/**
 * Sessions that survive their node's drain (issue #35 item 0): three nodes on one real
 * Redis behind the round-robin balancer (no affinity), each in turn drained — in process
 * (`close()`, which SIGTERM runs: the paced drain, then the rest), then as real `bayou start`
 * processes sent SIGTERM — and started again on its port,
 * while a fourth node outside the balancer publishes a numbered stream. Subscribers: CometD
 * with its ack extension, Faye and `@bayou/client`, each over WebSocket and long-polling
 * (Faye opens its WebSocket after a handshake over HTTP: the node it lands on takes the
 * session over from its owner, as a drain hands it over).
 * A draining node hands its sessions over through Redis; each client reconnects with its
 * clientId wherever the balancer sends it, and the node there adopts the session: every
 * accepted message reaches every client exactly once, and no client handshakes again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../src/index.js';
import { type BayouProcess, startBayou } from './bayou-process.js';
import { eventually, numberedStream, redisPerFile, requireRedis } from './cluster-helpers.js';
import { describeOf, HandoverClients, handoverNodeOptions, type Subscriber } from './handover-helpers.js';
import { TRANSPORTS } from './interop-helpers.js';
import { freePort } from './programs.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

requireRedis('sessions handed over at a drain');

const redis = redisPerFile();
const servers: BayouServer[] = [];
const clients = new HandoverClients();
let balancer: RoundRobinBalancer | null = null;
const processes: BayouProcess[] = [];

afterEach(async () => {
  await clients.close();
  await balancer?.close();
  balancer = null;
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
  for (const p of processes.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

/**
 * A rolling restart behind the round-robin balancer: six subscribers (CometD with its ack
 * extension, Faye, `@bayou/client`, each over WebSocket and long-polling) on a numbered
 * stream published by `publisher` (outside the balancer); `drain(i)` takes node i out of the
 * balancer, drains it and starts it again. Every message once, one handshake per client.
 */
async function rollingRestart(
  ports: number[],
  publisher: BayouServer,
  drain: (i: number) => Promise<void>,
): Promise<void> {
  const rr = await RoundRobinBalancer.start(ports.map((port, i) => ({ name: `node${i}`, port })));
  balancer = rr;
  const url = `${rr.base}/bayeux`;
  const subs: Subscriber[] = [];
  for (const transport of TRANSPORTS) {
    subs.push(await clients.cometd(url, transport, ['/numbered']));
    subs.push(await clients.faye(url, transport, ['/numbered']));
    subs.push(await clients.bayou(url, transport, ['/numbered']));
  }
  const stream = numberedStream((data) => Promise.resolve(publisher.bayou.publish('/numbered', data)));
  await eventually(() => {
    for (const s of subs) expect(s.received.length, describeOf(s, stream.sent)).toBeGreaterThan(3);
  }, 10_000);
  for (let i = 0; i < ports.length; i++) {
    rr.remove(`node${i}`);
    await drain(i);
    rr.restore(`node${i}`);
    const mark = stream.sent;
    await eventually(() => {
      for (const s of subs) expect(Math.max(...s.received), describeOf(s, mark)).toBeGreaterThanOrEqual(mark);
    }, 10_000);
  }
  const n = await stream.stop();
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
}

describe('sessions handed over at a drain (rolling restart of three nodes on Redis)', () => {
  it('in process: every CometD (ack), Faye and @bayou/client subscriber gets every message once, with no new handshake', async () => {
    const keyPrefix = `handover-${process.pid}:`;
    const options = (port: number) => handoverNodeOptions(port, redis().url, keyPrefix);
    const nodes: BayouServer[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const server = await createServer(options(0));
      servers.push(server);
      ports.push(Number(new URL(await server.listen()).port));
      nodes.push(server);
    }
    const publisher = await createServer(options(0));
    servers.push(publisher);
    let handedOver = 0;
    await rollingRestart(ports, publisher, async (i) => {
      const node = nodes[i] as BayouServer;
      await node.close();
      handedOver += node.bayou.stats().removed.handover;
      const again = await createServer(options(ports[i] as number));
      servers.push(again);
      await again.listen();
      nodes[i] = again;
    });
    // Every session moved at least once (each node drained while holding some of them).
    expect(handedOver).toBeGreaterThanOrEqual(6);
  }, 60_000);

  it('three `bayou start --redis` processes, each sent SIGTERM and started again: the same', async () => {
    const url = redis().url;
    const prefix = `handover-cli-${process.pid}:`;
    const args = (port: number): string[] =>
      ['--port', String(port), '--redis', url, '--redis-prefix', prefix, '--history-size', '2000'].concat([
        '--log-level',
        'warn',
      ]);
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) processes.push(await startBayou(args(port)));
    const publisher = await createServer({
      port: 0,
      logger: false,
      historySize: 2000,
      redis: url,
      redisEngine: { keyPrefix: prefix },
    });
    servers.push(publisher);
    await rollingRestart(ports, publisher, async (i) => {
      const victim = processes[i] as BayouProcess;
      victim.child.kill('SIGTERM');
      expect(await victim.exited, victim.output).toBe(0);
      processes[i] = await startBayou(args(ports[i] as number));
    });
  }, 60_000);
});
