/**
 * The Engine contract suite: every engine runs it unchanged (memory now, Redis next).
 * A factory gives a fresh backend per test; engines made from one backend form a
 * cluster, so every part is checked across three nodes as well as on one.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import type { Engine, EngineNode, HistoryPolicy, Publication } from '../src/engine/engine.js';
import { inboxOf } from '../src/kernel/cluster-link.js';
import {
  type ForwardHandler,
  type ForwardRequest,
  type ForwardResponse,
  NodeLink,
  type NodeLinkHost,
} from '../src/kernel/node-link.js';

export interface EngineBackend {
  /** A new engine on this backend (a node to be). */
  create(): Engine;
  /** Ends `engine` as a killed process would: no goodbye, its state must expire. */
  crash(engine: Engine): Promise<void>;
  /** Tears the backend down after the test. */
  destroy(): Promise<void>;
}

/** Settings a test asks of its backend. */
export interface BackendTuning {
  /**
   * ms a channel's position outlives its history when nobody publishes (memory: the bus's
   * `historyTtl`, with a sweep short enough to see it; Redis: `epochTtlMs`).
   */
  readonly epochTtlMs?: number;
  /** Most channels with history (per node for Redis). */
  readonly historyChannels?: number;
}

export interface EngineFactory {
  readonly name: string;
  backend(tuning?: BackendTuning): Promise<EngineBackend>;
  /** How long a crashed node's state may take to expire (the suite waits up to this). */
  readonly expiryMs: number;
}

const BATCH: ForwardRequest = {
  body: '[{"channel":"/meta/connect"}]',
  url: '/bayeux',
  headers: { 'user-agent': 'test' },
  remoteAddress: '127.0.0.1',
  browserId: null,
};
const KEEP: HistoryPolicy = { size: 100, ttlMs: 60_000 };
const NONE: HistoryPolicy = { size: 0, ttlMs: 0 };
let ids = 0;

/** A node that records what the engine hands it. */
class RecordingNode implements EngineNode {
  readonly nodeId = `n${++ids}${Math.random().toString(36).slice(2, 6)}`;
  readonly received: Publication[] = [];
  private waiters: (() => void)[] = [];

  /** The node-to-node layer above this node's broker (set once the engine started). */
  link: NodeLink | null = null;
  host: NodeLinkHost | null = null;
  /** How this node answers a forwarded batch. */
  forwarded: ForwardHandler = async (request) => ({
    status: 200,
    body: JSON.stringify({ by: this.nodeId, body: request.body }),
  });

  deliver(publication: Publication): void {
    if (publication.channel === inboxOf(this.nodeId) && NodeLink.owns(publication.payload)) {
      this.link?.receive(publication.payload, (request) => this.forwarded(request));
      return;
    }
    this.received.push(publication);
    for (const w of this.waiters.splice(0)) w();
  }

  payloads(channel?: string): string[] {
    return this.received.filter((p) => channel === undefined || p.channel === channel).map((p) => p.payload);
  }

  /** Resolves once `n` publications arrived in all. */
  async count(n: number, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.nodeId}: ${this.received.length} of ${n} publications arrived`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

const msg = (channel: string, n: number): string => JSON.stringify({ channel, data: { n } });

export function engineContract(factory: EngineFactory): void {
  describe(`Engine contract: ${factory.name}`, () => {
    let backend: EngineBackend;
    let tuning: BackendTuning | undefined;
    const running: Engine[] = [];
    const links: NodeLink[] = [];

    async function node(): Promise<{ engine: Engine; node: RecordingNode }> {
      backend ??= await factory.backend(tuning);
      const engine = backend.create();
      const n = new RecordingNode();
      await engine.start(n);
      running.push(engine);
      n.host = {
        nodeId: n.nodeId,
        nodes: () => engine.directory.nodes(),
        isAlive: (id) => engine.directory.isAlive(id),
        send: (channel, payload, policy) => engine.broker.publish(channel, payload, policy),
        inboxOf,
        run: (op) => ({ by: n.nodeId, op: op.op }),
      };
      n.link = new NodeLink(n.host, { askMs: 5000, forwardMs: 20_000, livenessMs: 100 });
      links.push(n.link);
      await engine.broker.subscribe(inboxOf(n.nodeId));
      return { engine, node: n };
    }
    async function cluster(size = 3) {
      const nodes = [];
      for (let i = 0; i < size; i++) nodes.push(await node());
      return nodes;
    }
    /** A publication on a fresh channel marks the end of what a node received before it. */
    async function barrier(pub: Engine, ...nodes: { engine: Engine; node: RecordingNode }[]) {
      const channel = `/barrier/${++ids}`;
      for (const n of nodes) await n.engine.broker.subscribe(channel);
      await pub.broker.publish(channel, msg(channel, 0), NONE);
      await Promise.all(nodes.map(({ node: n }) => eventually(() => n.payloads(channel).length === 1, 5000)));
    }

    afterEach(async () => {
      for (const l of links.splice(0)) l.close();
      for (const e of running.splice(0)) await e.close().catch(() => undefined);
      await backend?.destroy();
      backend = undefined as unknown as EngineBackend;
      tuning = undefined;
    });

    describe('broker', () => {
      it('delivers a publication to every node with interest, its own included, and not to others', async () => {
        const [a, b, c] = await cluster();
        await a!.engine.broker.subscribe('/chat/a');
        await b!.engine.broker.subscribe('/chat/a');
        await a!.engine.broker.publish('/chat/a', msg('/chat/a', 1), KEEP);
        await a!.node.count(1);
        await b!.node.count(1);
        await barrier(a!.engine, c!);
        expect(a!.node.payloads('/chat/a')).toEqual([msg('/chat/a', 1)]);
        expect(b!.node.payloads('/chat/a')).toEqual([msg('/chat/a', 1)]);
        expect(c!.node.payloads('/chat/a')).toEqual([]);
      });

      it('matches wildcard names: /* one segment, /** any depth, each node once', async () => {
        const [a, b, c] = await cluster();
        await a!.engine.broker.subscribe('/x/*');
        await b!.engine.broker.subscribe('/x/**');
        for (const name of ['/x/y', '/x/*', '/x/**', '/**']) await c!.engine.broker.subscribe(name);
        await a!.engine.broker.publish('/x/y', msg('/x/y', 1), NONE);
        await a!.engine.broker.publish('/x/y/z', msg('/x/y/z', 2), NONE);
        await b!.node.count(2);
        await c!.node.count(2);
        await barrier(a!.engine, a!, b!, c!);
        expect(a!.node.payloads('/x/y')).toEqual([msg('/x/y', 1)]);
        expect(a!.node.payloads('/x/y/z')).toEqual([]);
        expect(b!.node.payloads('/x/y').length + b!.node.payloads('/x/y/z').length).toBe(2);
        expect(c!.node.payloads('/x/y')).toEqual([msg('/x/y', 1)]);
        expect(c!.node.payloads('/x/y/z')).toEqual([msg('/x/y/z', 2)]);
      });

      it('counts interest: a name stays subscribed until every subscribe is undone', async () => {
        const [a, b] = await cluster(2);
        await b!.engine.broker.subscribe('/r');
        await b!.engine.broker.subscribe('/r');
        await b!.engine.broker.unsubscribe('/r');
        await a!.engine.broker.publish('/r', msg('/r', 1), NONE);
        await b!.node.count(1);
        await b!.engine.broker.unsubscribe('/r');
        await a!.engine.broker.publish('/r', msg('/r', 2), NONE);
        await barrier(a!.engine, b!);
        expect(b!.node.payloads('/r')).toEqual([msg('/r', 1)]);
      });

      it('assigns consecutive offsets in one epoch, and keeps publish order on every node', async () => {
        const [a, b, c] = await cluster();
        await c!.engine.broker.subscribe('/seq');
        const positions = [];
        for (let i = 1; i <= 20; i++) {
          const from = i % 2 === 0 ? a! : b!;
          positions.push(await from.engine.broker.publish('/seq', msg('/seq', i), KEEP));
        }
        expect(positions.map((p) => p?.offset)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(new Set(positions.map((p) => p?.epoch)).size).toBe(1);
        await c!.node.count(20);
        expect(c!.node.received.map((p) => p.position?.offset)).toEqual(positions.map((p) => p?.offset));
        expect(c!.node.payloads('/seq')).toEqual(Array.from({ length: 20 }, (_, i) => msg('/seq', i + 1)));
      });

      it('gives no position to a channel without history', async () => {
        const [a] = await cluster(1);
        await a!.engine.broker.subscribe('/plain');
        expect(await a!.engine.broker.publish('/plain', msg('/plain', 1), NONE)).toBeNull();
        await a!.node.count(1);
        expect(a!.node.received[0]?.position).toBeNull();
      });

      it('merges record updates into one image and delivers them as record publications', async () => {
        const [a, b] = await cluster(2);
        await b!.engine.broker.subscribe('/fx/EURUSD');
        await a!.engine.broker.publishRecord('/fx/EURUSD', JSON.stringify({ bid: 1, ask: 2 }));
        await a!.engine.broker.publishRecord('/fx/EURUSD', JSON.stringify({ bid: 3 }));
        await b!.node.count(2);
        expect(b!.node.received.map((p) => [p.record, JSON.parse(p.payload)])).toEqual([
          [true, { bid: 1, ask: 2 }],
          [true, { bid: 3 }],
        ]);
        expect(await b!.engine.broker.recordImage('/fx/EURUSD')).toEqual({ bid: 3, ask: 2 });
        await a!.engine.broker.dropRecord('/fx/EURUSD');
        expect(await b!.engine.broker.recordImage('/fx/EURUSD')).toBeNull();
        expect(await b!.engine.broker.recordImage('/fx/unknown')).toBeNull();
      });
    });

    describe('history', () => {
      it('returns what came after a position, in order, on any node', async () => {
        const [a, b] = await cluster(2);
        const positions = [];
        for (let i = 1; i <= 5; i++) positions.push(await a!.engine.broker.publish('/h', msg('/h', i), KEEP));
        const r = await b!.engine.history.since('/h', positions[1]!);
        expect(r.recovered).toBe(true);
        if (!r.recovered) return;
        expect(r.publications.map((p) => p.payload)).toEqual([3, 4, 5].map((n) => msg('/h', n)));
        expect(r.publications.map((p) => p.position?.offset)).toEqual([3, 4, 5]);
        expect(r.position).toEqual(positions[4]);
        expect(await b!.engine.history.latest('/h')).toEqual(positions[4]);
      });

      it('starts a channel at offset 0 and recovers nothing missed from there', async () => {
        const [a] = await cluster(1);
        const start = await a!.engine.history.latest('/fresh');
        expect(start.offset).toBe(0);
        const r = await a!.engine.history.since('/fresh', start);
        expect(r).toEqual({ recovered: true, publications: [], position: start });
        const p1 = await a!.engine.broker.publish('/fresh', msg('/fresh', 1), KEEP);
        expect(p1).toEqual({ offset: 1, epoch: start.epoch });
        const r2 = await a!.engine.history.since('/fresh', start);
        expect(r2.recovered && r2.publications.map((p) => p.payload)).toEqual([msg('/fresh', 1)]);
      });

      it('cannot recover past the size bound, from another epoch, or from the future', async () => {
        const [a] = await cluster(1);
        const small: HistoryPolicy = { size: 3, ttlMs: 60_000 };
        const first = await a!.engine.broker.publish('/t', msg('/t', 1), small);
        for (let i = 2; i <= 6; i++) await a!.engine.broker.publish('/t', msg('/t', i), small);
        const latest = await a!.engine.history.latest('/t');
        expect(latest.offset).toBe(6);
        const trimmed = await a!.engine.history.since('/t', first!);
        expect(trimmed).toEqual({ recovered: false, position: latest });
        const edge = await a!.engine.history.since('/t', { offset: 3, epoch: latest.epoch });
        expect(edge.recovered && edge.publications.map((p) => p.position?.offset)).toEqual([4, 5, 6]);
        expect((await a!.engine.history.since('/t', { offset: 5, epoch: 'other' })).recovered).toBe(false);
        expect((await a!.engine.history.since('/t', { offset: 99, epoch: latest.epoch })).recovered).toBe(
          false,
        );
      });

      it('cannot recover messages older than the time-to-live', async () => {
        const [a] = await cluster(1);
        const short: HistoryPolicy = { size: 100, ttlMs: 150 };
        const start = await a!.engine.history.latest('/ttl');
        await a!.engine.broker.publish('/ttl', msg('/ttl', 1), short);
        expect((await a!.engine.history.since('/ttl', start)).recovered).toBe(true);
        await eventually(async () => !(await a!.engine.history.since('/ttl', start)).recovered, 5000);
      });

      it('forgets a channel idle past its time-to-live: it starts again in a new epoch, and no earlier position is recovered', async () => {
        tuning = { epochTtlMs: 200 };
        const [a, b] = await cluster(2);
        const short: HistoryPolicy = { size: 100, ttlMs: 200 };
        const first = await a!.engine.broker.publish('/idle', msg('/idle', 1), short);
        const last = await a!.engine.broker.publish('/idle', msg('/idle', 2), short);
        expect(last).toEqual({ offset: 2, epoch: first?.epoch });
        await eventually(async () => (await b!.engine.history.latest('/idle')).epoch !== last?.epoch, 5000);
        const again = await a!.engine.broker.publish('/idle', msg('/idle', 3), short);
        expect(again?.offset).toBe(1);
        expect(again?.epoch).not.toBe(last?.epoch);
        for (const p of [first, last, { offset: 0, epoch: last!.epoch }]) {
          expect((await b!.engine.history.since('/idle', p!)).recovered).toBe(false);
        }
      });

      it('keeps history for at most historyChannels channels: the least recently published loses it, and its positions are not recovered', async () => {
        tuning = { historyChannels: 2 };
        const [a, b] = await cluster(2);
        const pa = await a!.engine.broker.publish('/cap/a', msg('/cap/a', 1), KEEP);
        const pb = await a!.engine.broker.publish('/cap/b', msg('/cap/b', 1), KEEP);
        await a!.engine.broker.publish('/cap/a', msg('/cap/a', 2), KEEP); // /cap/b is now the oldest
        await a!.engine.broker.publish('/cap/c', msg('/cap/c', 1), KEEP);
        const kept = await b!.engine.history.since('/cap/a', pa!);
        expect(kept.recovered && kept.publications.map((p) => p.payload)).toEqual([msg('/cap/a', 2)]);
        await eventually(async () => !(await b!.engine.history.since('/cap/b', pb!)).recovered, 5000);
        const again = await a!.engine.broker.publish('/cap/b', msg('/cap/b', 2), KEEP);
        expect(again?.epoch).not.toBe(pb?.epoch);
        expect((await b!.engine.history.since('/cap/b', pb!)).recovered).toBe(false);
      });
    });

    describe('presence', () => {
      it('sums subscriber counts over nodes; a closed node takes its count with it', async () => {
        const [a, b, c] = await cluster();
        expect(await a!.engine.presence.setCount('/p', 2)).toBe(2);
        expect(await b!.engine.presence.setCount('/p', 3)).toBe(5);
        expect(await c!.engine.presence.count('/p')).toBe(5);
        expect(await a!.engine.presence.setCount('/p', 0)).toBe(3);
        await b!.engine.close();
        expect(await c!.engine.presence.count('/p')).toBe(0);
      });

      it('keeps member lists with info; members of a closed node are gone', async () => {
        const [a, b] = await cluster(2);
        await a!.engine.presence.join('/room', { clientId: 'c1', info: { user: 'ada' } });
        await b!.engine.presence.join('/room', { clientId: 'c2', info: { user: 'bob' } });
        const sorted = async () =>
          (await a!.engine.presence.members('/room')).sort((x, y) => x.clientId.localeCompare(y.clientId));
        expect(await sorted()).toEqual([
          { clientId: 'c1', info: { user: 'ada' } },
          { clientId: 'c2', info: { user: 'bob' } },
        ]);
        await a!.engine.presence.leave('/room', 'c1');
        expect((await sorted()).map((m) => m.clientId)).toEqual(['c2']);
        await b!.engine.close();
        expect(await sorted()).toEqual([]);
      });

      it("expires a crashed node's counts and members", async () => {
        const [a, b] = await cluster(2);
        await b!.engine.presence.setCount('/q', 4);
        await b!.engine.presence.join('/q', { clientId: 'gone' });
        await backend.crash(b!.engine);
        await eventually(
          async () =>
            (await a!.engine.presence.count('/q')) === 0 &&
            (await a!.engine.presence.members('/q')).length === 0,
          factory.expiryMs,
        );
      });
    });

    describe('channel occupancy', () => {
      it('reports occupied to exactly one of three racing nodes, and vacated to the last to leave', async () => {
        const nodes = await cluster();
        for (const channel of ['/occ/a', '/occ/b']) {
          const firsts = await Promise.all(nodes.map((n) => n.engine.presence.occupy(channel)));
          expect(firsts.filter(Boolean)).toHaveLength(1);
          expect(await nodes[0]!.engine.presence.occupy(channel)).toBe(false);
          expect(await nodes[0]!.engine.presence.vacate(channel)).toBe(false);
          expect(await nodes[1]!.engine.presence.vacate(channel)).toBe(false);
          expect(await nodes[2]!.engine.presence.vacate(channel)).toBe(true);
          // Vacating again is no transition.
          expect(await nodes[2]!.engine.presence.vacate(channel)).toBe(false);
          expect(await nodes[1]!.engine.presence.occupy(channel)).toBe(true);
          expect(await nodes[1]!.engine.presence.vacate(channel)).toBe(true);
        }
      });

      it("vacates a crashed node's channels once, whoever sweeps", async () => {
        const [a, b, c] = await cluster();
        expect(await c!.engine.presence.occupy('/occ/dead')).toBe(true);
        expect(await c!.engine.presence.occupy('/occ/shared')).toBe(true);
        expect(await a!.engine.presence.occupy('/occ/shared')).toBe(false);
        await backend.crash(c!.engine);
        const seen: string[] = [];
        await eventually(async () => {
          const [x, y] = await Promise.all([
            a!.engine.presence.vacateDead(),
            b!.engine.presence.vacateDead(),
          ]);
          seen.push(...x, ...y);
          return seen.length > 0;
        }, factory.expiryMs);
        expect(seen).toEqual(['/occ/dead']);
        expect(await a!.engine.presence.vacateDead()).toEqual([]);
        expect(await a!.engine.presence.vacate('/occ/shared')).toBe(true);
      });
    });

    describe('session directory, and the node-to-node layer above the broker', () => {
      it('lists live nodes; a batch forwarded to its owner and an operation come back with the reply', async () => {
        const [a, b, c] = await cluster();
        const ids = [a!.node.nodeId, b!.node.nodeId, c!.node.nodeId];
        expect((await a!.engine.directory.nodes()).sort()).toEqual([...ids].sort());
        expect(await a!.engine.directory.isAlive(c!.node.nodeId)).toBe(true);
        const reply = await a!.node.link!.forward(c!.node.nodeId, BATCH);
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.body)).toEqual({ by: c!.node.nodeId, body: BATCH.body });
        const answers = await a!.node.link!.askAll<{ by: string }>({ op: 'info' });
        expect(answers.map((x) => ('result' in x ? x.result.by : x.error)).sort()).toEqual([...ids].sort());
        // Nothing waits once answered.
        expect(a!.node.link!.waiting).toBe(0);
      });

      it("fails a request its owner failed, or did not answer in time, with the owner's words", async () => {
        const [a, b] = await cluster(2);
        b!.node.forwarded = async () => {
          throw new Error('owner exploded');
        };
        await expect(a!.node.link!.forward(b!.node.nodeId, BATCH)).rejects.toThrow(/owner exploded/);
        let release = () => {};
        b!.node.forwarded = () =>
          new Promise<ForwardResponse>((resolve) => {
            release = () => resolve({ status: 200, body: 'late' });
          });
        // A link of node a that waits 300 ms (the server's waits its `timeout` + 15 s).
        const quick = new NodeLink(a!.node.host!, { forwardMs: 300 });
        const t0 = Date.now();
        await expect(quick.forward(b!.node.nodeId, BATCH)).rejects.toThrow(/did not answer/);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
        release();
        expect(quick.waiting).toBe(0);
      });

      it('tells a dead node from a live one: a request waiting on it fails when it is found dead, a new one at once', async () => {
        const [a, b] = await cluster(2);
        const gone = b!.node.nodeId;
        // Its owner holds the batch (a held connect) and then dies.
        b!.node.forwarded = () => new Promise<ForwardResponse>(() => {});
        const waiting = a!.node.link!.forward(gone, BATCH);
        const failed = waiting.then(
          () => null,
          (err: Error) => err.message,
        );
        await eventually(() => a!.node.link!.waiting === 1, 5000);
        await backend.crash(b!.engine);
        await eventually(async () => !(await a!.engine.directory.isAlive(gone)), factory.expiryMs);
        expect(await a!.engine.directory.isAlive('never-was')).toBe(false);
        // Found dead within the liveness period (100 ms here), long before the timeout.
        expect(await failed).toMatch(/died with a request pending/);
        await expect(a!.node.link!.forward(gone, BATCH)).rejects.toThrow(/not alive/);
        expect(a!.node.link!.waiting).toBe(0);
      });
    });

    describe('leases', () => {
      it('lets one node hold a lease; another takes it after release', async () => {
        const [a, b] = await cluster(2);
        expect(await a!.engine.leases.acquire('provider:/fx/EURUSD', 10_000)).toBe(true);
        expect(await b!.engine.leases.acquire('provider:/fx/EURUSD', 10_000)).toBe(false);
        expect(await a!.engine.leases.renew('provider:/fx/EURUSD', 10_000)).toBe(true);
        expect(await b!.engine.leases.renew('provider:/fx/EURUSD', 10_000)).toBe(false);
        await b!.engine.leases.release('provider:/fx/EURUSD');
        expect(await b!.engine.leases.acquire('provider:/fx/EURUSD', 10_000)).toBe(false);
        await a!.engine.leases.release('provider:/fx/EURUSD');
        expect(await b!.engine.leases.acquire('provider:/fx/EURUSD', 10_000)).toBe(true);
        expect(await a!.engine.leases.renew('provider:/fx/EURUSD', 10_000)).toBe(false);
      });

      it('frees a lease when it is not renewed in time or its node dies', async () => {
        const [a, b, c] = await cluster();
        expect(await a!.engine.leases.acquire('short', 150)).toBe(true);
        await eventually(() => b!.engine.leases.acquire('short', 10_000), 5000);
        expect(await c!.engine.leases.acquire('long', 60_000)).toBe(true);
        await backend.crash(c!.engine);
        await eventually(() => a!.engine.leases.acquire('long', 10_000), factory.expiryMs);
      });
    });
  });
}
