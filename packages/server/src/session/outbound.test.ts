import { afterEach, describe, expect, it, vi } from 'vitest';
import { LONG_POLLING_CARRIER, WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { Carrier } from './carrier.js';
import { Outbound } from './outbound.js';
import { Session, type SessionHost } from './session.js';
import { transition } from './session-lifecycle.js';

function setup(longPollDelay = 0, maxBufferedBytes = 1 << 20, saturated = true) {
  const completed: Session[] = [];
  const overflowed: Session[] = [];
  const outbound = new Outbound(
    (s) => {
      completed.push(s);
      transition(s, { type: 'release' }, Date.now(), 10_000);
    },
    (s) => overflowed.push(s),
    maxBufferedBytes,
    longPollDelay,
    { marker: (_s, messages) => `"#${messages.length}"`, resends: () => null, resending: () => false },
    () => saturated,
  );
  const host: SessionHost = {
    scheduleFlush: (s) => outbound.schedule(s),
    overflow: () => false,
    maxQueuedMessages: 100,
    maxQueuedBytes: Number.POSITIVE_INFINITY,
  };
  return {
    outbound,
    completed,
    overflowed,
    session: () => new Session('n.s', WEBSOCKET_CARRIER, host, Infinity),
  };
}

function socket(buffered = 0) {
  const frames: string[] = [];
  const link: Carrier & { frames: string[] } = {
    kind: WEBSOCKET_CARRIER,
    frames,
    answer: (messages: string[]) => link.sendText(`[${messages.join(',')}]`),
    sendText: (f: Buffer | string) => {
      frames.push(f.toString());
      return Buffer.byteLength(f);
    },
    get bufferedAmount() {
      return buffered;
    },
    end: () => undefined,
  };
  return link;
}

describe('Outbound', () => {
  afterEach(() => vi.useRealTimers());

  it('flushes everything a WebSocket session got in one turn as one frame', async () => {
    vi.useFakeTimers();
    const { outbound, session } = setup();
    const s = session();
    const ws = socket();
    transition(s, { type: 'bind-carrier', carrier: ws, held: null }, 0, 10_000);
    s.enqueue('1');
    s.enqueue('2');
    s.enqueue('3');
    expect(ws.frames).toEqual([]);
    await vi.runAllTimersAsync();
    expect(ws.frames).toEqual(['[1,2,3]']);
    expect(outbound.stats).toMatchObject({ messagesOut: 3, frames: 1 });
  });

  const holdPoll = (s: Session) =>
    transition(
      s,
      {
        type: 'hold-poll',
        held: {
          id: '1',
          deadline: Infinity,
          poll: { kind: LONG_POLLING_CARRIER, answer: () => 0 },
          browserId: null,
        },
      },
      0,
      10_000,
    );

  it('answers a held long-poll once, after the shared delay, with what arrived meanwhile, when the loop is saturated', async () => {
    vi.useFakeTimers();
    const { completed, session } = setup(3);
    const s = session();
    holdPoll(s);
    s.enqueue('a');
    await vi.advanceTimersByTimeAsync(1);
    s.enqueue('b');
    expect(completed).toEqual([]);
    await vi.advanceTimersByTimeAsync(5);
    expect(completed).toEqual([s]);
    expect(s.queue).toEqual(['a', 'b']);
  });

  it('answers a held long-poll at the end of the turn when the loop is not saturated', async () => {
    vi.useFakeTimers();
    const { completed, session } = setup(3, 1 << 20, false);
    const s = session();
    holdPoll(s);
    s.enqueue('a');
    expect(completed).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(completed).toEqual([s]);
    expect(s.queue).toEqual(['a']);
  });

  it('keeps deliveries for the next connect reply when they travel only in connect replies', async () => {
    vi.useFakeTimers();
    const { completed, session } = setup();
    const s = session();
    const ws = socket();
    s.requestDelivery('connect-reply');
    transition(s, { type: 'bind-carrier', carrier: ws, held: null }, 0, 10_000);
    s.enqueue('x');
    await vi.runAllTimersAsync();
    expect(ws.frames).toEqual([]);
    expect(s.queue).toEqual(['x']);
    expect(completed).toEqual([]);
  });

  it('ends each frame of a session in numbered delivery with the marker, and no other', async () => {
    vi.useFakeTimers();
    const { session } = setup();
    const [numbered, plain] = [session(), session()];
    const [a, b] = [socket(), socket()];
    numbered.requestDelivery('numbered');
    transition(numbered, { type: 'bind-carrier', carrier: a, held: null }, 0, 10_000);
    transition(plain, { type: 'bind-carrier', carrier: b, held: null }, 0, 10_000);
    for (const s of [numbered, plain]) {
      s.enqueue('"x"');
      s.enqueue('"y"');
    }
    await vi.runAllTimersAsync();
    expect(a.frames).toEqual(['["x","y","#2"]']);
    expect(b.frames).toEqual(['["x","y"]']);
  });

  it('reports a socket buffering more than maxBufferedBytes as a slow consumer', async () => {
    vi.useFakeTimers();
    const { overflowed, session } = setup(0, 10);
    const s = session();
    transition(s, { type: 'bind-carrier', carrier: socket(11), held: null }, 0, 10_000);
    s.enqueue('"big"');
    await vi.runAllTimersAsync();
    expect(overflowed).toEqual([s]);
  });
});

describe('Outbound frames', () => {
  it('encodes the frame of a message reaching many sessions alone in a turn once, and hands a mixed frame over as text', async () => {
    vi.useFakeTimers();
    const { session } = setup();
    const sent: (Buffer | string)[] = [];
    const link = (): Carrier => ({
      kind: WEBSOCKET_CARRIER,
      answer: () => 0,
      sendText: (b: Buffer | string) => {
        sent.push(b);
        return Buffer.byteLength(b);
      },
      bufferedAmount: 0,
      end: () => undefined,
    });
    const [a, b, c] = [session(), session(), session()];
    for (const s of [a, b, c])
      transition(s, { type: 'bind-carrier', carrier: link(), held: null }, 0, 10_000);
    const json = '{"channel":"/x","data":1}';
    for (const s of [a, b, c]) s.enqueue(json);
    c.enqueue('{"channel":"/y","data":2}');
    await vi.runAllTimersAsync();
    expect(sent.map((b) => b.toString())).toEqual([
      `[${json}]`,
      `[${json}]`,
      `[${json},{"channel":"/y","data":2}]`,
    ]);
    expect(sent[0]).toBe(sent[1]);
    expect(typeof sent[2]).toBe('string');
    vi.useRealTimers();
  });

  it('hands a compressing carrier the frames the frame before had as one shared payload, a numbered one as a shared head and its marker', async () => {
    vi.useFakeTimers();
    const { session } = setup();
    const sent: (Buffer | string)[] = [];
    const parts: [Buffer, string][] = [];
    const link = (compressesShared: boolean): Carrier => ({
      kind: WEBSOCKET_CARRIER,
      answer: () => 0,
      compressesShared,
      sendText: (b: Buffer | string) => {
        sent.push(b);
        return Buffer.byteLength(b);
      },
      sendParts: (head: Buffer, tail: string) => {
        parts.push([head, tail]);
        return head.length + tail.length;
      },
      bufferedAmount: 0,
      end: () => undefined,
    });
    const [x, y] = ['{"channel":"/x","data":1}', '{"channel":"/x","data":2}'];
    const plain = [session(), session(), session()];
    const numbered = [session(), session(), session()];
    for (const s of numbered) s.requestDelivery('numbered');
    for (const s of [...plain, ...numbered])
      transition(s, { type: 'bind-carrier', carrier: link(true), held: null }, 0, 10_000);
    const off = session();
    transition(off, { type: 'bind-carrier', carrier: link(false), held: null }, 0, 10_000);
    for (const s of [...plain, off, ...numbered]) {
      s.enqueue(x);
      s.enqueue(y);
    }
    await vi.runAllTimersAsync();
    // The first of a run goes as text; the next ones as one Buffer; a carrier that does not compress, as text.
    expect(sent.map((b) => b.toString())).toEqual([
      `[${x},${y}]`,
      `[${x},${y}]`,
      `[${x},${y}]`,
      `[${x},${y}]`,
    ]);
    expect(typeof sent[0]).toBe('string');
    expect(sent[1]).toBe(sent[2]);
    expect(Buffer.isBuffer(sent[1])).toBe(true);
    expect(typeof sent[3]).toBe('string');
    // Numbered (the same messages again): the head is shared and each ends with its own marker.
    expect(parts.map(([h, t]) => h.toString() + t)).toEqual(Array(3).fill(`[${x},${y},"#2"]`));
    expect(parts[0]?.[0]).toBe(parts[2]?.[0]);
  });

  it('hands a compressing carrier the one frame a message reaching many sessions alone has (compressed once)', async () => {
    vi.useFakeTimers();
    const { session } = setup();
    const sent: (Buffer | string)[] = [];
    const link = (): Carrier => ({
      kind: WEBSOCKET_CARRIER,
      compressesShared: true,
      sendText: (b: Buffer | string) => {
        sent.push(b);
        return Buffer.byteLength(b);
      },
      answer: () => 0,
      bufferedAmount: 0,
      end: () => undefined,
    });
    const sessions = [session(), session(), session()];
    for (const s of sessions) transition(s, { type: 'bind-carrier', carrier: link(), held: null }, 0, 10_000);
    for (const s of sessions) s.enqueue('{"channel":"/x","data":1}');
    await vi.runAllTimersAsync();
    expect(sent).toHaveLength(3);
    expect(sent[1]).toBe(sent[0]);
    expect(sent[2]).toBe(sent[0]);
  });
});
