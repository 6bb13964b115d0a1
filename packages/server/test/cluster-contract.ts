/**
 * Three Bayou nodes (full kernels, each its own HTTP server) on one engine backend: the
 * scenario every engine must pass on top of the engine contract. Clients talk to any
 * node; the cluster routes by clientId.
 */
import { formatError } from '@bayou/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateServerOptions, Engine } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { eventually, TestClient, type Transport } from './test-client.js';

export interface ClusterBackend {
  engine(): Engine;
  destroy(): Promise<void>;
}

export function clusterScenario(name: string, backend: () => Promise<ClusterBackend>): void {
  describe(`three nodes on one ${name} engine`, () => {
    let nodes: Started[] = [];
    let b: ClusterBackend;
    const clients: TestClient[] = [];

    async function cluster(options: CreateServerOptions = {}): Promise<Started[]> {
      b = await backend();
      nodes = [];
      for (let i = 0; i < 3; i++) nodes.push(await startServer({ engine: b.engine(), ...options }));
      return nodes;
    }
    async function client(node: Started, transport: Transport): Promise<TestClient> {
      const c = new TestClient(node.base, transport);
      clients.push(c);
      expect((await c.connect()).successful).toBe(true);
      return c;
    }
    afterEach(async () => {
      for (const c of clients.splice(0)) await c.close();
      for (const n of nodes) await n.server.close().catch(() => undefined);
      await b?.destroy();
    });

    it('orders long-polling deliveries on every node (they go in connect replies only), asked of the engine', async () => {
      const [a, bNode] = await cluster();
      const polling = await client(a!, 'long-polling');
      const socket = await client(bNode!, 'websocket');
      expect(a!.server.bayou.session(polling.clientId)?.deliveryMode).toBe('connect-reply');
      expect(bNode!.server.bayou.session(socket.clientId)?.deliveryMode).not.toBe('connect-reply');
    });

    it.each<Transport>(['websocket', 'long-polling'])(
      'delivers a publish on one node to exact and wildcard subscribers on the others (%s)',
      async (transport) => {
        const [a, bNode, c] = await cluster();
        const exact = await client(a!, transport);
        const one = await client(bNode!, transport);
        const deep = await client(c!, transport);
        await exact.subscribe('/room/1');
        await one.subscribe('/room/*');
        await deep.subscribe('/**');
        const publisher = await client(c!, transport);
        for (let i = 1; i <= 5; i++)
          expect((await publisher.publish('/room/1', { i })).successful).toBe(true);
        for (const sub of [exact, one, deep]) {
          await eventually(() => sub.deliveries('/room/1').length === 5);
          expect(sub.deliveries('/room/1').map((m) => (m.data as { i: number }).i)).toEqual([1, 2, 3, 4, 5]);
        }
      },
    );

    it('serves a long-polling session through any node: its batches are forwarded to the owner', async () => {
      const [a, bNode, c] = await cluster();
      const owner = new TestClient(a!.base, 'long-polling');
      clients.push(owner);
      expect((await owner.handshake()).successful).toBe(true);
      const clientId = owner.clientId;
      const via = (node: Started) => {
        const t = new TestClient(node.base, 'long-polling');
        t.clientId = clientId;
        clients.push(t);
        return t;
      };
      expect((await via(bNode!).subscribe('/fwd')).successful).toBe(true);
      await a!.server.bayou.publish('/fwd', 'hello');
      // Connects through the third node: the first is answered at once (as CometD does),
      // the second is held on the owner and answered with the message.
      const poller = via(c!);
      const connect = { channel: '/meta/connect', clientId, connectionType: 'long-polling' };
      expect((await poller.request(connect)).successful).toBe(true);
      expect((await poller.request(connect)).successful).toBe(true);
      expect(poller.deliveries('/fwd').map((m) => m.data)).toEqual(['hello']);
      expect(a!.server.bayou.session(clientId)).toBeDefined();
      expect(bNode!.server.bayou.session(clientId)).toBeUndefined();
    });

    it('a closing node has the owners answer at once the connects it relayed, and 503 what they cannot', async () => {
      // A connect timeout far longer than the test: only the release answers the connect in time.
      const [a, , c] = await cluster({ timeout: 20_000 });
      // No connect loop of its own: the only connect held is the one relayed below.
      const owner = new TestClient(a!.base, 'long-polling');
      clients.push(owner);
      expect((await owner.handshake()).successful).toBe(true);
      const clientId = owner.clientId;
      const connect = { channel: '/meta/connect', clientId, connectionType: 'long-polling' };
      // The first connect is answered at once; the next is held.
      expect((await owner.request(connect)).successful).toBe(true);
      const held = fetch(`${c!.base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([connect]),
      });
      // Held on the owner (a) through c; the owner would answer it only after the connect timeout.
      await eventually(() => a!.server.bayou.session(clientId)?.state === 'polling');
      const startedClosing = Date.now();
      const closed = c!.server.close();
      const answer = await held;
      // The owner answered it now (what was queued goes out, nothing is lost to a client
      // without the ack extension), long before its timeout.
      expect(answer.status).toBe(200);
      const [reply] = (await answer.json()) as { channel: string; successful: boolean }[];
      expect(reply).toMatchObject({ channel: '/meta/connect', successful: true });
      expect(Date.now() - startedClosing).toBeLessThan(5000);
      await closed;
    });

    it("answers a dead node's sessions 402 with handshake advice", async () => {
      const [a, bNode] = await cluster();
      const c = await client(a!, 'long-polling');
      await c.close();
      await a!.server.close();
      const stray = new TestClient(bNode!.base, 'long-polling');
      stray.clientId = c.clientId;
      clients.push(stray);
      // Until the survivors know the session's node is gone: then they refuse it.
      const reply = await eventually(
        async () => {
          const r = await stray.subscribe('/x');
          return r.successful === false ? r : false;
        },
        10_000,
        'a refusal',
      );
      expect(reply).toMatchObject({ successful: false, error: formatError('sessionUnknown') });
      expect(reply.advice).toMatchObject({ reconnect: 'handshake' });
    });

    it('runs one record provider for the cluster, and moves it when its node goes', async () => {
      const started: string[] = [];
      const [a, bNode, c] = await cluster({
        records: [{ pattern: '/fx/*' }],
        providerLease: 300,
        providerLinger: 100,
      });
      for (const [i, n] of [a!, bNode!, c!].entries()) {
        n.server.bayou.provide('/fx/*', {
          onRequest: (subject) => {
            started.push(`${i}:${subject}`);
            void n.server.bayou.updateRecord(subject, { node: i, at: Date.now() });
          },
        });
      }
      const sa = await client(a!, 'websocket');
      const sb = await client(bNode!, 'websocket');
      await sa.subscribe('/fx/EUR');
      await sb.subscribe('/fx/EUR');
      await eventually(() => sb.deliveries('/fx/EUR').length > 0);
      expect(started).toEqual(['0:/fx/EUR']);
      expect(await c!.server.bayou.clusterSubscriberCount('/fx/EUR')).toBe(2);
      await a!.server.close();
      await eventually(() => started.length === 2, 10_000);
      expect(started[1]).toBe('1:/fx/EUR');
      await eventually(
        () => sb.deliveries('/fx/EUR').some((m) => (m.data as { node?: number }).node === 1),
        10_000,
      );
    });
  });
}
