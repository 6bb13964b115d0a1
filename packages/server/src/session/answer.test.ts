/**
 * One carrier interface (`session/carrier.ts`): a held connect is answered the same way
 * whatever holds it — `Outbound.answer` has the carrier write the messages as one frame
 * (`ConnectCarrier.answer`) and counts it; a carrier that pushes and buffers past the bound
 * is a slow consumer, a long-poll whose client left counts nothing.
 */
import { describe, expect, it } from 'vitest';
import { LONG_POLLING_CARRIER, WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { Carrier, ConnectCarrier } from './carrier.js';
import { Outbound } from './outbound.js';
import { Session, type SessionHost } from './session.js';
import { transition } from './session-lifecycle.js';

function setup() {
  const overflowed: Session[] = [];
  const outbound = new Outbound(
    () => undefined,
    (s) => overflowed.push(s),
    100,
    0,
    { marker: () => undefined, resends: () => null, resending: () => false },
  );
  const host: SessionHost = {
    scheduleFlush: () => undefined,
    overflow: () => false,
    maxQueuedMessages: 100,
    maxQueuedBytes: Number.POSITIVE_INFINITY,
  };
  return { outbound, overflowed, session: new Session('n.s', WEBSOCKET_CARRIER, host, Infinity) };
}

/** A carrier of `kind` recording the frames it was asked to write; `gone`: a long-poll whose client left. */
function carrier(pushes: boolean, buffered = 0, gone = false): Carrier & { frames: string[][] } {
  const frames: string[][] = [];
  return {
    kind: pushes ? WEBSOCKET_CARRIER : LONG_POLLING_CARRIER,
    frames,
    answer(messages: string[]) {
      if (gone) return 0;
      frames.push(messages);
      return Buffer.byteLength(`[${messages.join(',')}]`);
    },
    sendText: () => 0,
    bufferedAmount: buffered,
    end: () => undefined,
  };
}

describe('answering a held connect', () => {
  it('is one call for a long-poll and for a carrier that pushes: one frame each, counted', () => {
    const { outbound, session } = setup();
    const poll = carrier(false);
    const socket = carrier(true);
    transition(session, { type: 'bind-carrier', carrier: socket, held: null }, 0, 10_000);
    outbound.answer(session, poll as ConnectCarrier, ['{"a":1}', '{"r":1}']);
    outbound.answer(session, socket, ['{"r":2}']);
    expect(poll.frames).toEqual([['{"a":1}', '{"r":1}']]);
    expect(socket.frames).toEqual([['{"r":2}']]);
    expect(outbound.stats).toEqual({ messagesOut: 3, bytesOut: 17 + 9, frames: 2 });
  });

  it('drops the session bound to a carrier that buffers past the bound; a long-poll whose client left counts nothing', () => {
    const { outbound, overflowed, session } = setup();
    const slow = carrier(true, 1000);
    transition(session, { type: 'bind-carrier', carrier: slow, held: null }, 0, 10_000);
    outbound.answer(session, slow, ['{"r":1}']);
    expect(overflowed).toEqual([session]);
    outbound.answer(session, carrier(false, 0, true), ['{"r":2}']);
    expect(outbound.stats.frames).toBe(1);
  });
});
