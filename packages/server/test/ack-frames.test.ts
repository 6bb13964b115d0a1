/**
 * Acknowledged delivery in numbered WebSocket frames (a Bayou client's `ext.bayou.ackFrames`):
 * deliveries leave at once, each frame ending with its batch number; a connect's `ackFrames`
 * forgets what arrived and resends nothing, and after a reconnect a connect's `ack` brings
 * back, in order, what was lost with the old socket. Over long-polling the same session is
 * acknowledged as CometD's extension does.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer } from './start-server.js';
import { eventually } from './test-client.js';

type Msg = Record<string, unknown> & { channel: string };

async function openSocket(base: string) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/bayeux`);
  const inbox: Msg[] = [];
  ws.on('message', (d) => inbox.push(...(JSON.parse(d.toString()) as Msg[])));
  await new Promise((r) => ws.once('open', r));
  /** Resolves with (and removes) everything up to the first message `pred` accepts. */
  const until = async (pred: (m: Msg) => boolean): Promise<Msg[]> => {
    const at = await eventually(() => {
      const i = inbox.findIndex(pred);
      if (i < 0) throw new Error(`not received; inbox: ${JSON.stringify(inbox)}`);
      return i;
    }, 5000);
    return inbox.splice(0, at + 1);
  };
  const send = (messages: Msg[]) => ws.send(JSON.stringify(messages));
  return { ws, inbox, until, send };
}

const HANDSHAKE = {
  channel: '/meta/handshake',
  version: '1.0',
  supportedConnectionTypes: ['websocket', 'long-polling'],
  ext: { ack: true, bayou: { ackFrames: true } },
};
const isMarker = (m: Msg) => m.channel === '/meta/ack';
const markerOf = (m: Msg | undefined) => (m?.ext as { ack?: number } | undefined)?.ack;
/** Data and markers in arrival order: what a client of numbered frames sees. */
const shape = (list: Msg[]) =>
  list
    .filter((m) => m.data !== undefined || isMarker(m))
    .map((m) => (isMarker(m) ? `#${markerOf(m)}` : m.data));

describe('numbered WebSocket frames', () => {
  it('deliver at once with a batch number, forget what the client reports, and resend what a dead socket lost', async () => {
    const { server, base } = await startServer({ timeout: 5000 });
    const one = await openSocket(base);
    one.send([HANDSHAKE]);
    const [hs] = await one.until((m) => m.channel === '/meta/handshake');
    expect(hs?.ext).toEqual({ ack: { enabled: true, batch: 0, frames: true } });
    const clientId = hs?.clientId as string;
    const connect = (id: string, ext: Record<string, number>, hold?: number) => ({
      id,
      channel: '/meta/connect',
      clientId,
      connectionType: 'websocket',
      ext,
      ...(hold === undefined ? {} : { advice: { timeout: hold } }),
    });
    one.send([
      connect('c1', { ack: 0 }, 0),
      { id: 's', channel: '/meta/subscribe', clientId, subscription: '/f' },
    ]);
    // The replies go in order with deliveries, so their frame is numbered too.
    const replies = await one.until(isMarker);
    expect(replies.map((m) => m.id ?? `#${markerOf(m)}`)).toEqual(['c1', 's', '#1']);
    one.send([connect('c2', { ackFrames: 0 })]); // held: deliveries do not wait for it

    server.bayou.publish('/f', 'a');
    expect(shape(await one.until(isMarker))).toEqual(['a', '#2']);
    server.bayou.publish('/f', 'b');
    expect(shape(await one.until(isMarker))).toEqual(['b', '#3']);

    // Reporting frame 3 supersedes the held connect: its reply comes, and nothing again.
    one.send([connect('c3', { ackFrames: 3 })]);
    const superseded = await one.until(isMarker);
    expect(superseded.some((m) => m.id === 'c2' && m.successful === true)).toBe(true);
    expect(shape(superseded)).toEqual(['#4']);

    server.bayou.publish('/f', 'c');
    expect(shape(await one.until(isMarker))).toEqual(['c', '#5']);
    one.ws.terminate(); // as if frame 5 never reached the client
    await new Promise((r) => one.ws.once('close', r));
    server.bayou.publish('/f', 'd');

    const two = await openSocket(base);
    two.send([connect('c4', { ack: 4 }, 0)]);
    const resumed = await two.until(isMarker);
    expect(shape(resumed)).toEqual(['c', 'd', `#${markerOf(resumed.at(-1))}`]);
    expect(resumed.some((m) => m.id === 'c4' && m.successful === true)).toBe(true);
    // The resend came exactly once: the next message follows it, alone.
    two.send([connect('c5', { ackFrames: markerOf(resumed.at(-1)) as number })]);
    server.bayou.publish('/f', 'e');
    const next = await two.until((m) => m.data === 'e');
    expect(shape(next)).toEqual(['e']);
    two.ws.terminate();
    await server.close();
  });

  it('over long-polling carry deliveries only in numbered connect replies, as CometD ack does', async () => {
    const { server, base } = await startServer({ timeout: 300 });
    const post = async (messages: Msg[]) => {
      const r = await fetch(`${base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(messages),
      });
      return (await r.json()) as Msg[];
    };
    const [hs] = await post([HANDSHAKE]);
    const clientId = hs?.clientId as string;
    const connect = (ack: number) => ({
      channel: '/meta/connect',
      clientId,
      connectionType: 'long-polling',
      ext: { ack },
    });
    await post([connect(0)]);
    const sub = await post([{ channel: '/meta/subscribe', clientId, subscription: '/f' }]);
    server.bayou.publish('/f', 1);
    // A reply to something else carries no delivery: it waits for the connect.
    expect(sub.map((m) => m.channel)).toEqual(['/meta/subscribe']);
    const first = await post([connect(0)]);
    expect(first.map((m) => m.data ?? m.ext)).toEqual([1, { ack: 1 }]);
    expect(first.some(isMarker)).toBe(false);
    // Batch 1 not acknowledged: it comes again.
    const again = await post([connect(0)]);
    expect(again.map((m) => m.data ?? m.ext)).toEqual([1, { ack: 2 }]);
    await server.close();
  });
});
