/**
 * CometD's acknowledgement extension: messages travel only in numbered connect replies,
 * and a batch the client did not acknowledge is sent again — so what was lost with a
 * response or a connection arrives after all, in order.
 */

import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer } from './start-server.js';
import { eventually } from './test-client.js';

type Msg = Record<string, unknown> & { channel: string };

/** A hand-driven client: it sends exactly what the test says, nothing on its own. */
interface Wire {
  send(messages: Msg[]): Promise<Msg[]>;
  close(): void;
}

async function longPolling(base: string): Promise<Wire> {
  return {
    async send(messages) {
      const r = await fetch(`${base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(messages),
      });
      return (await r.json()) as Msg[];
    },
    close() {},
  };
}

async function websocket(base: string): Promise<Wire> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/bayeux`);
  await new Promise((r) => ws.once('open', r));
  const inbox: Msg[] = [];
  ws.on('message', (d) => inbox.push(...(JSON.parse(d.toString()) as Msg[])));
  return {
    // Resolves with everything received until the reply to the last message sent.
    async send(messages) {
      const last = messages.at(-1) as Msg;
      ws.send(JSON.stringify(messages));
      const at = await eventually(
        () => {
          const i = inbox.findIndex((m) => m.channel === last.channel && m.successful !== undefined);
          return i >= 0 ? i : false;
        },
        2000,
        `the reply to ${last.channel}`,
      );
      return inbox.splice(0, at + 1);
    },
    close: () => ws.terminate(),
  };
}

describe.each([
  ['long-polling', longPolling],
  ['websocket', websocket],
] as const)('the ack extension over %s', (transport, open) => {
  it('numbers connect replies, delivers only in them, and resends what was not acknowledged', async () => {
    const { server, base } = await startServer({ timeout: 300 });
    const wire = await open(base);
    const [hs] = await wire.send([
      {
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: [transport],
        ext: { ack: true },
      },
    ]);
    expect(hs?.ext).toEqual({ ack: { enabled: true, batch: 0 } });
    const clientId = hs?.clientId as string;
    const connect = (ack: number) => ({
      channel: '/meta/connect',
      clientId,
      connectionType: transport,
      ext: { ack },
    });
    expect((await wire.send([connect(0)])).at(-1)?.ext).toEqual({ ack: 0 }); // first connect: at once
    const sub = await wire.send([{ channel: '/meta/subscribe', clientId, subscription: '/acked' }]);
    expect(sub.map((m) => m.channel)).toEqual(['/meta/subscribe']); // replies still come at once

    server.bayou.publish('/acked', 1);
    server.bayou.publish('/acked', 2);
    const first = await wire.send([connect(0)]);
    expect(first.map((m) => m.data ?? m.ext)).toEqual([1, 2, { ack: 1 }]);

    // Pretend batch 1 was lost: acknowledge 0 only. It comes again, before the new message.
    server.bayou.publish('/acked', 3);
    const again = await wire.send([connect(0)]);
    expect(again.map((m) => m.data ?? m.ext)).toEqual([1, 2, 3, { ack: 2 }]);

    // Everything acknowledged: the next reply (after the hold) carries nothing old.
    const quiet = await wire.send([connect(2)]);
    expect(quiet.map((m) => m.data ?? m.ext)).toEqual([{ ack: 3 }]);
    wire.close();
    await server.close();
  });
});

describe('the ack extension and a dropped WebSocket', () => {
  it('delivers what was queued while the socket was gone, and what was lost with it', async () => {
    const { server, base } = await startServer({ timeout: 300 });
    const first = await websocket(base);
    const [hs] = await first.send([
      {
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['websocket'],
        ext: { ack: true },
      },
    ]);
    const clientId = hs?.clientId as string;
    const connect = (ack: number) => ({
      channel: '/meta/connect',
      clientId,
      connectionType: 'websocket',
      ext: { ack },
    });
    await first.send([connect(0)]);
    await first.send([{ channel: '/meta/subscribe', clientId, subscription: '/acked' }]);
    server.bayou.publish('/acked', 'a');
    const delivered = await first.send([connect(0)]);
    expect(delivered.map((m) => m.data ?? m.ext)).toEqual(['a', { ack: 1 }]);
    first.close(); // ...and the client never saw that frame
    server.bayou.publish('/acked', 'b');
    const second = await websocket(base);
    const resumed = await second.send([connect(0)]);
    expect(resumed.map((m) => m.data ?? m.ext)).toEqual(['a', 'b', { ack: 2 }]);
    second.close();
    await server.close();
  });
});

describe('the ack extension and a connect superseded from another socket', () => {
  it('delivers a message queued in that instant once, not as two batches', async () => {
    const { server, base } = await startServer({ timeout: 2000 });
    const url = `${base.replace('http', 'ws')}/bayeux`;
    const open = async () => {
      const ws = new WebSocket(url);
      const inbox: Msg[] = [];
      ws.on('message', (d) => inbox.push(...(JSON.parse(d.toString()) as Msg[])));
      await new Promise((r) => ws.once('open', r));
      return { ws, inbox };
    };
    const until = (inbox: Msg[], pred: (m: Msg) => boolean): Promise<Msg> =>
      eventually(() => inbox.find(pred) ?? false, 5000, 'the message');
    const one = await open();
    one.ws.send(
      JSON.stringify([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['websocket'],
          ext: { ack: true },
        },
      ]),
    );
    const clientId = (await until(one.inbox, (m) => m.channel === '/meta/handshake')).clientId as string;
    const connect = (id: string, ack: number, timeout0: boolean) => ({
      id,
      channel: '/meta/connect',
      clientId,
      connectionType: 'websocket',
      ext: { ack },
      ...(timeout0 ? { advice: { timeout: 0 } } : {}),
    });
    one.ws.send(JSON.stringify([{ id: 's', channel: '/meta/subscribe', clientId, subscription: '/x' }]));
    await until(one.inbox, (m) => m.id === 's');
    one.ws.send(JSON.stringify([connect('c1', 0, true)]));
    await until(one.inbox, (m) => m.id === 'c1');
    one.ws.send(JSON.stringify([connect('c2', 0, false)])); // held by the server
    // The socket's messages are taken in order: once this reply is back, c2 is held.
    one.ws.send(JSON.stringify([{ id: 'b', channel: '/meta/subscribe', clientId, subscription: '/b' }]));
    await until(one.inbox, (m) => m.id === 'b');
    expect(one.inbox.some((m) => m.id === 'c2')).toBe(false);

    const two = await open();
    two.ws.send(
      JSON.stringify([{ id: 'p', channel: '/x', clientId, data: { n: 1 } }, connect('c3', 0, true)]),
    );
    const c3 = await until(two.inbox, (m) => m.id === 'c3');
    const acked = (c3.ext as { ack: number }).ack;
    two.ws.send(JSON.stringify([connect('c4', acked, false)]));
    await until(two.inbox, (m) => m.channel === '/x' && m.successful === undefined);
    // Let any second copy arrive: the next connect reply closes the exchange.
    const c4 = await until(two.inbox, (m) => m.id === 'c4');
    two.ws.send(JSON.stringify([connect('c5', (c4.ext as { ack: number }).ack, true)]));
    await until(two.inbox, (m) => m.id === 'c5');
    const copies = [...one.inbox, ...two.inbox].filter(
      (m) => m.channel === '/x' && m.successful === undefined,
    );
    expect(copies.map((m) => m.data)).toEqual([{ n: 1 }]);
    one.ws.terminate();
    two.ws.terminate();
    await server.close();
  });
});
