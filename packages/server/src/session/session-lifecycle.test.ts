import { describe, expect, it } from 'vitest';
import { LONG_POLLING_CARRIER, WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { Carrier } from './carrier.js';
import {
  due,
  type HeldConnect,
  IllegalTransition,
  type Lifecycle,
  type LifecycleEvent,
  type SessionState,
  TRANSITIONS,
  transition,
} from './session-lifecycle.js';

const MAX = 10_000;
const socket = (): Carrier => ({
  kind: WEBSOCKET_CARRIER,
  answer: () => 0,
  sendText: () => 0,
  bufferedAmount: 0,
  end: () => undefined,
});
const heldOn = (poll: boolean, deadline = 500): HeldConnect => ({
  id: '1',
  deadline,
  poll: poll ? { kind: LONG_POLLING_CARRIER, answer: () => 0 } : null,
  browserId: null,
});
const fresh = (): Lifecycle => ({ state: 'handshaken', carrier: null, held: null, expiresAt: MAX });

/** A lifecycle brought to `state` through legal events. */
function inState(state: SessionState): Lifecycle {
  const l = fresh();
  if (state === 'handshaken') return l;
  if (state === 'polling') transition(l, { type: 'hold-poll', held: heldOn(true) }, 0, MAX);
  if (state === 'carried') transition(l, { type: 'bind-carrier', carrier: socket(), held: null }, 0, MAX);
  if (state === 'expiring') transition(l, { type: 'detach' }, 0, MAX);
  if (state === 'removed') transition(l, { type: 'remove' }, 0, MAX);
  expect(l.state).toBe(state);
  return l;
}

const events: Record<string, () => LifecycleEvent> = {
  'hold-poll': () => ({ type: 'hold-poll', held: heldOn(true) }),
  'bind-carrier': () => ({ type: 'bind-carrier', carrier: socket(), held: null }),
  detach: () => ({ type: 'detach' }),
  remove: () => ({ type: 'remove' }),
};
/** Where each event leads when it changes the state. */
const target: Record<string, SessionState> = {
  'hold-poll': 'polling',
  'bind-carrier': 'carried',
  detach: 'expiring',
  remove: 'removed',
};

describe('session lifecycle', () => {
  const states = Object.keys(TRANSITIONS) as SessionState[];
  for (const from of states) {
    for (const [name, make] of Object.entries(events)) {
      const to = target[name] as SessionState;
      // Detaching needs no held connect: a polling session is answered ('release') instead.
      const legal =
        (TRANSITIONS[from].includes(to) && !(name === 'detach' && from === 'polling')) ||
        (from === 'removed' && name === 'remove');
      it(`${legal ? 'allows' : 'refuses'} ${name} from ${from}`, () => {
        const l = inState(from);
        if (legal) {
          transition(l, make(), 100, MAX);
          expect(l.state).toBe(from === 'removed' ? 'removed' : to);
        } else {
          expect(() => transition(l, make(), 100, MAX)).toThrow(IllegalTransition);
          expect(l.state).toBe(from);
        }
      });
    }
  }

  it('holds a long-poll until its deadline, then the sweep answers it', () => {
    const l = fresh();
    transition(l, { type: 'hold-poll', held: heldOn(true, 500) }, 0, MAX);
    expect(l.expiresAt).toBe(Number.POSITIVE_INFINITY);
    expect(due(l, 499)).toBeNull();
    expect(due(l, 500)).toBe('answer');
    const released = transition(l, { type: 'release' }, 600, MAX);
    expect(released?.deadline).toBe(500);
    expect(l.state).toBe('expiring');
    expect(l.expiresAt).toBe(600 + MAX);
    expect(due(l, 600 + MAX - 1)).toBeNull();
    expect(due(l, 600 + MAX)).toBe('expire');
  });

  it('keeps a socket session bound after its held connect is answered, and expires it when the socket closes', () => {
    const l = fresh();
    const s = socket();
    transition(l, { type: 'bind-carrier', carrier: s, held: heldOn(false, 300) }, 0, MAX);
    expect(due(l, 300)).toBe('answer');
    transition(l, { type: 'release' }, 300, MAX);
    expect(l.state).toBe('carried');
    expect(l.carrier).toBe(s);
    expect(l.expiresAt).toBe(300 + MAX);
    transition(l, { type: 'carrier-closed' }, 400, MAX);
    expect(l.state).toBe('expiring');
    expect(l.carrier).toBeNull();
    expect(l.expiresAt).toBe(400 + MAX);
  });

  it('refuses to detach a session with a held connect, and does nothing for a removed one', () => {
    const l = inState('polling');
    expect(() => transition(l, { type: 'detach' }, 0, MAX)).toThrow(IllegalTransition);
    const gone = inState('removed');
    expect(transition(gone, { type: 'release' }, 0, MAX)).toBeNull();
    expect(due(gone, Number.MAX_SAFE_INTEGER)).toBeNull();
  });
});
