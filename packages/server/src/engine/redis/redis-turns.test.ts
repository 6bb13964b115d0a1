import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Publication } from '../engine.js';
import { TurnBatcher } from './redis-turns.js';

const pub = (payload: string): Publication => ({ channel: '/a', payload, position: null });
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function batcher(windowMs = 1) {
  const got: string[] = [];
  const clock = { now: 0 };
  const turns = new TurnBatcher(
    windowMs,
    (p) => got.push(p.payload),
    () => clock.now,
  );
  return { turns, got, clock };
}

/** Sends this node's publishes `seqs` in one turn, all coming back to it. */
async function sendTurn(turns: TurnBatcher, seqs: number[]): Promise<void> {
  for (const s of seqs) turns.sending(null, s, true);
  await nextTurn();
}

describe('TurnBatcher, receiving', () => {
  it('passes a publication at once when its batch is back whole, and another node’s when nothing is held', async () => {
    const { turns, got } = batcher();
    await sendTurn(turns, [1]);
    turns.arrived(pub('own1'), 1);
    turns.arrived(pub('other'), -1);
    expect(got).toEqual(['own1', 'other']);
  });

  it('holds a batch that came back in part until the rest is back, with what arrived meanwhile, in arrival order', async () => {
    const { turns, got } = batcher();
    await sendTurn(turns, [1, 2, 3]);
    await sendTurn(turns, [4]);
    turns.arrived(pub('own1'), 1);
    turns.arrived(pub('other'), -1);
    turns.arrived(pub('own2'), 2);
    await nextTurn();
    expect(got).toEqual([]);
    turns.arrived(pub('own3'), 3);
    expect(got).toEqual(['own1', 'other', 'own2', 'own3']);
    turns.arrived(pub('own4'), 4);
    expect(got).toEqual(['own1', 'other', 'own2', 'own3', 'own4']);
  });

  it('publishes this node will not receive back do not count toward a batch', async () => {
    const { turns, got } = batcher();
    turns.sending(null, 1, true);
    turns.sending(null, 2, false);
    await nextTurn();
    turns.arrived(pub('own1'), 1);
    expect(got).toEqual(['own1']);
  });

  it('waits at most the window after the latest part of the batch came back, then delivers what it held', async () => {
    const { turns, got, clock } = batcher(0.5);
    await sendTurn(turns, [1, 2, 3]);
    turns.arrived(pub('own1'), 1);
    clock.now = 0.4;
    turns.arrived(pub('own2'), 2);
    clock.now = 0.8;
    await nextTurn();
    await nextTurn();
    expect(got).toEqual([]);
    clock.now = 0.9;
    await nextTurn();
    expect(got).toEqual(['own1', 'own2']);
    turns.arrived(pub('other'), -1);
    expect(got).toEqual(['own1', 'own2', 'other']);
  });

  it('a later publication of this node closes the batches before it', async () => {
    const { turns, got } = batcher();
    await sendTurn(turns, [1, 2]);
    await sendTurn(turns, [3]);
    turns.arrived(pub('own1'), 1);
    turns.arrived(pub('own3'), 3);
    expect(got).toEqual(['own1', 'own3']);
  });

  it('reset delivers what it held and forgets the batches; drop discards what it held', async () => {
    const { turns, got } = batcher();
    await sendTurn(turns, [1, 2]);
    turns.arrived(pub('own1'), 1);
    turns.reset();
    expect(got).toEqual(['own1']);
    await sendTurn(turns, [3, 4]);
    turns.arrived(pub('own3'), 3);
    turns.drop();
    turns.arrived(pub('own4'), 4);
    await nextTurn();
    expect(got).toEqual(['own1', 'own4']);
  });
});

describe('TurnBatcher, sending', () => {
  let server: Server | null = null;
  let client: Socket | null = null;
  afterEach(() => {
    client?.destroy();
    server?.close();
  });

  it('gathers the writes of one turn on a real socket into one segment, sent when the turn ends', async () => {
    const chunks: string[] = [];
    let received: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => {
      received = resolve;
    });
    server = createServer((s) =>
      s.on('data', (d) => {
        chunks.push(d.toString());
        if (chunks.join('').length === 9) received();
      }),
    );
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const socket = await new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      client = s;
    });
    const { turns } = batcher();
    for (const [i, text] of ['one', 'two', 'six'].entries()) {
      turns.sending(socket, i + 1, true);
      socket.write(text);
    }
    expect(socket.writableLength).toBe(9); // nothing left yet: held until the turn ends
    await arrived;
    expect(chunks).toEqual(['onetwosix']);
  });
});
