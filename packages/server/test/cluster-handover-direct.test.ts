/**
 * Direct deliveries (`bayou.deliver(clientId, …)`: a private message to one session) follow
 * a session handed over at a drain (issue #35): three nodes on one real Redis, two behind the
 * round-robin balancer and a third outside it that sends. The session's clientId names the
 * node it was made on; once another node adopted it, a message sent there (the third node's
 * routing by clientId, or the old node itself) must reach the adopter, and one sent while the
 * session is between nodes waits with its record — every message once, in order, no new
 * handshake. CometD clients over long-polling and WebSocket.
 */
import type { CometD } from 'cometd';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionHandover } from '../src/engine/engine.js';
import { MAX_MAIL } from '../src/engine/redis/redis-handover.js';
import { type BayouServer, type CreateServerOptions, createServer, serverApi } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { ownerOf } from '../src/session/session-registry.js';
import {
  eventually,
  type NumberedStream,
  numberedStream,
  redisPerFile,
  requireRedis,
} from './cluster-helpers.js';
import { cometdOver, disconnect, handshake } from './cometd-helpers.js';
import { TRANSPORTS, type Transport } from './interop-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

requireRedis('direct deliveries to sessions handed over');

const redis = redisPerFile();
const servers: BayouServer[] = [];
const cometds: CometD[] = [];
const streams: NumberedStream[] = [];
let balancer: RoundRobinBalancer | null = null;

afterEach(async () => {
  for (const s of streams.splice(0)) await s.stop();
  for (const c of cometds.splice(0)) await disconnect(c);
  await balancer?.close();
  balancer = null;
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

let prefixes = 0;
const API_KEY = 'cluster-handover-direct-key';

function optionsFor(keyPrefix: string): (port: number) => CreateServerOptions {
  return (port) => ({
    host: '127.0.0.1',
    port,
    logger: false,
    timeout: 2000,
    sweepInterval: 50,
    maxInterval: 5000,
    drainSpread: 300,
    redis: redis().url,
    redisEngine: { keyPrefix, heartbeatMs: 100, nodeTtlMs: 1000, commandTimeoutMs: 2000 },
  });
}

async function start(options: CreateServerOptions): Promise<{ server: BayouServer; port: number }> {
  const server = await createServer(options);
  servers.push(server);
  return { server, port: Number(new URL(await server.listen()).port) };
}

/** A CometD client listening on `/private/n` (no subscription: direct messages only). */
interface Receiver {
  readonly name: string;
  readonly cometd: CometD;
  clientId: string;
  readonly received: number[];
  handshakes: number;
}

async function receiver(url: string, transport: Transport): Promise<Receiver> {
  const cometd = cometdOver(transport, url);
  cometds.push(cometd);
  const r: Receiver = { name: `cometd ${transport}`, cometd, clientId: '', received: [], handshakes: 0 };
  cometd.addListener('/meta/handshake', (m) => {
    if (m.successful === true) r.handshakes++;
  });
  cometd.addListener('/private/n', (m) => r.received.push((m.data as { n: number }).n));
  expect((await handshake(cometd)).successful).toBe(true);
  r.clientId = cometd.getClientId() as string;
  return r;
}

/** Sends `{ n }` to `clientId` from `from` every 20 ms; a send no node took is sent again. */
/** Sends that failed, by reason (for a failure's message). */
const failures = new Map<string, number>();

function sendTo(from: BayouServer, clientId: string): NumberedStream {
  const stream = numberedStream(async (data) => {
    const sent = await from.bayou.deliver(clientId, '/private/n', data).catch((err: Error) => {
      failures.set(err.message, (failures.get(err.message) ?? 0) + 1);
      throw err;
    });
    if (!sent) {
      failures.set('not found', (failures.get('not found') ?? 0) + 1);
      throw new Error(`${clientId} not found`);
    }
  });
  streams.push(stream);
  return stream;
}

const report = (r: Receiver, n: number): string =>
  `${r.name}: ${r.received.length} received of ${n}, ${r.handshakes} handshakes, last ${r.received.slice(-10).join(',')}; failed sends ${JSON.stringify([...failures])}`;

describe('direct deliveries follow a session handed over', () => {
  it('sent from a third node during and after each node of the balancer is drained: every message once, in order', async () => {
    const options = optionsFor(`direct-${process.pid}.${++prefixes}:`);
    const nodes = [await start(options(0)), await start(options(0))];
    const sender = (await start(options(0))).server;
    const rr = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    balancer = rr;
    const receivers: Receiver[] = [];
    for (const transport of TRANSPORTS) receivers.push(await receiver(`${rr.base}/bayeux`, transport));
    const sends = receivers.map((r) => sendTo(sender, r.clientId));
    await eventually(() => {
      for (const r of receivers) expect(r.received.length, report(r, 0)).toBeGreaterThan(3);
    }, 10_000);
    for (let i = 0; i < nodes.length; i++) {
      rr.remove(`node${i}`);
      await (nodes[i] as { server: BayouServer }).server.close();
      const again = await start(options((nodes[i] as { port: number }).port));
      nodes[i] = again;
      rr.restore(`node${i}`);
      const marks = sends.map((s) => s.sent);
      await eventually(() => {
        receivers.forEach((r, j) => {
          const mark = marks[j] as number;
          expect(Math.max(...r.received), report(r, mark)).toBeGreaterThanOrEqual(mark);
        });
      }, 10_000);
    }
    const totals = await Promise.all(sends.map((s) => s.stop()));
    await eventually(() => {
      receivers.forEach((r, j) => {
        expect(r.received.length, report(r, totals[j] as number)).toBeGreaterThanOrEqual(totals[j] as number);
      });
    }, 10_000);
    receivers.forEach((r, j) => {
      const n = totals[j] as number;
      expect(r.received, report(r, n)).toEqual(Array.from({ length: n }, (_, k) => k));
      expect(r.cometd.getClientId(), r.name).toBe(r.clientId);
      expect(r.handshakes, r.name).toBe(1);
    });
  }, 30_000);

  it('sent from the old node, alive, and from a third node after another node took the session over; the server API finds it too', async () => {
    const options = optionsFor(`direct-${process.pid}.${++prefixes}:`);
    const nodes = [await start(options(0)), await start(options(0))];
    const third = await createServer(options(0));
    servers.push(third);
    await third.app.register(serverApi, { apiKey: API_KEY });
    const thirdBase = await third.listen();
    const rr = await RoundRobinBalancer.start(nodes.map((n, i) => ({ name: `node${i}`, port: n.port })));
    balancer = rr;
    const r = await receiver(`${rr.base}/bayeux`, 'long-polling');
    const old = nodes.find((n) => n.server.bayou.nodeId === ownerOf(r.clientId))?.server as BayouServer;
    const other = nodes.find((n) => n.server !== old)?.server as BayouServer;
    expect(await old.bayou.deliver(r.clientId, '/private/n', { n: 0 })).toBe(true);
    await eventually(() => expect(r.received).toEqual([0]), 5000);
    // The node that is not the session's asks its owner to hand it over (as when a WebSocket
    // for it opens there); the client's next long-poll that reaches it adopts it.
    await operationsOf(other.app).control.ask(old.bayou.nodeId, { op: 'handover', clientId: r.clientId });
    await eventually(() => expect(other.bayou.session(r.clientId)).toBeDefined(), 10_000);
    expect(old.bayou.session(r.clientId)).toBeUndefined();
    expect(await old.bayou.deliver(r.clientId, '/private/n', { n: 1 })).toBe(true);
    expect(await third.bayou.deliver(r.clientId, '/private/n', { n: 2 })).toBe(true);
    expect(await other.bayou.deliver(r.clientId, '/private/n', { n: 3 })).toBe(true);
    await eventually(() => expect([...r.received].sort()).toEqual([0, 1, 2, 3]), 5000);
    expect(r.cometd.getClientId()).toBe(r.clientId);
    expect(r.handshakes).toBe(1);
    // The server API of the third node ends it where it lives now (the adopter).
    const answer = await fetch(`${thirdBase}/api/disconnect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: r.clientId }),
    });
    expect(await answer.json()).toEqual({ disconnected: 1 });
    expect(other.bayou.session(r.clientId)).toBeUndefined();
  }, 20_000);

  it('keeps at most MAX_MAIL messages of a session, taken once, and expiring with its record', async () => {
    const prefix = `direct-${process.pid}.${++prefixes}:`;
    const { server } = await start(optionsFor(prefix)(0));
    const store = operationsOf(server.app).engine.handover as SessionHandover;
    const admin = new Redis(redis().url);
    try {
      // A session never handed over: its node is rung and takes its mail, once.
      expect(await store.route('x.zero', 'm', 10_000)).toBeNull();
      expect(await store.takeMail('x.zero')).toEqual(['m']);
      expect(await store.takeMail('x.zero')).toEqual([]);
      // Not taken (its node went away): expires after the ttl given.
      expect(await store.route('x.gone', 'm', 300)).toBeNull();
      await eventually(async () => expect(await admin.keys(`${prefix}{session:x.gone}*`)).toEqual([]), 5000);
      // One waiting as a record: its mail, at most MAX_MAIL, goes with the claim.
      expect(await store.route('x.one', 'first', 10_000)).toBeNull();
      await store.put('x.one', '{}', 10_000);
      for (let i = 0; i < MAX_MAIL + 5; i++)
        expect(await store.route('x.one', String(i), 10_000)).toBe('kept');
      expect(await admin.llen(`${prefix}{session:x.one}:mail`)).toBe(MAX_MAIL);
      const claimed = await store.claim('x.one', 10_000);
      expect(
        claimed !== null && 'mail' in claimed
          ? [claimed.mail.length, claimed.mail[0], claimed.mail.at(-1)]
          : claimed,
      ).toEqual([MAX_MAIL, '5', String(MAX_MAIL + 4)]);
      expect(await admin.exists(`${prefix}{session:x.one}:mail`)).toBe(0);
      // Claimed: the next message is for the adopter to take.
      expect(await store.route('x.one', 'late', 10_000)).toEqual({ owner: server.bayou.nodeId });
      expect(await store.takeMail('x.one')).toEqual(['late']);
      // Never claimed: the mail expires with the record.
      await store.put('x.two', '{}', 300);
      expect(await store.route('x.two', 'm', 10_000)).toBe('kept');
      await eventually(async () => expect(await admin.keys(`${prefix}{session:x.two}*`)).toEqual([]), 5000);
    } finally {
      admin.disconnect();
    }
  });

  it("on one node (memory engine), a session of a process gone is nobody's: deliver resolves false", async () => {
    const { server } = await start({ host: '127.0.0.1', port: 0, logger: false });
    expect(await server.bayou.deliver('gone0000.abcdefgh', '/private/n', { n: 0 })).toBe(false);
  });
});
