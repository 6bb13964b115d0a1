import type { Message } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { HandshakeDeniedError } from '../errors.js';
import type { ServerSession } from '../session/session.js';
import { WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { RequestInfo } from '../types.js';
import { AuthExtension } from './auth-extension.js';

const handshake = { channel: '/meta/handshake' } as Message;
const ws: RequestInfo = {
  transport: 'websocket',
  carrier: WEBSOCKET_CARRIER,
  headers: {},
  url: '',
  remoteAddress: undefined,
};

function fakeSession(id: string, expSeconds: number | undefined): ServerSession {
  const s: { id: string; auth: Record<string, unknown>; setAuth(c: Record<string, unknown>): void } = {
    id,
    auth: expSeconds === undefined ? { sub: id } : { sub: id, exp: expSeconds },
    setAuth(claims: Record<string, unknown>) {
      s.auth = claims;
    },
  };
  return s as unknown as ServerSession;
}

function setup() {
  let now = 1_000_000;
  const expired: string[] = [];
  const ext = new AuthExtension({
    hooks: {
      refresh: async (session, message) => {
        const exp = (message.ext as { auth: { exp: number } }).auth.exp;
        if (exp < 0) throw new HandshakeDeniedError('invalid', 'bad');
        return { ...session.auth, exp };
      },
    },
    expire: (s) => expired.push(s.id),
    trustClientSession: true,
    tick: 100,
    clockTolerance: 0,
    now: () => now,
  });
  const advance = (ms: number): void => {
    now += ms;
    ext.sweep();
  };
  return { ext, expired, advance };
}

describe('AuthExtension expiry wheel', () => {
  it('ends each session once, in the sweep after its token expired, never before', () => {
    const { ext, expired, advance } = setup();
    const a = fakeSession('a', 1_000); // 1,000,000 ms: due now
    const b = fakeSession('b', 1_002); // due in 2 s
    const c = fakeSession('c', undefined); // no expiry: never watched
    for (const s of [a, b, c]) ext.outgoing({ successful: true }, handshake, s);
    expect(ext.watched).toBe(2);
    advance(100);
    expect(expired).toEqual(['a']);
    advance(1_850);
    expect(expired).toEqual(['a']);
    advance(100);
    expect(expired).toEqual(['a', 'b']);
    advance(60_000);
    expect(expired).toEqual(['a', 'b']);
    expect(ext.watched).toBe(0);
  });

  it('moves a refreshed session to its new expiry, and forgets removed ones', async () => {
    const { ext, expired, advance } = setup();
    const a = fakeSession('a', 1_001);
    const b = fakeSession('b', 1_001);
    ext.outgoing({ successful: true }, handshake, a);
    ext.outgoing({ successful: true }, handshake, b);
    const connect = (exp: number) =>
      ({ channel: '/meta/connect', ext: { auth: { token: 't', exp } } }) as Message;
    const refreshing = connect(1_010);
    expect(await ext.incoming(refreshing, a, ws)).toBeUndefined();
    // Verified, but not in force until the connect is accepted by every stage.
    expect(a.auth?.exp).toBe(1_001);
    ext.accepted(refreshing, a);
    expect(a.auth?.exp).toBe(1_010);
    expect(await ext.incoming(connect(-1), b, ws)).toEqual({
      error: '403::handshake_denied',
      advice: { reconnect: 'none', interval: 0 },
    });
    ext.removed(b);
    advance(5_000);
    expect(expired).toEqual([]);
    advance(5_100);
    expect(expired).toEqual(['a']);
    expect(ext.stats).toMatchObject({ refreshed: 1, refreshRefused: 1, expired: 1 });
  });

  it('does not watch a refused handshake', () => {
    const { ext } = setup();
    ext.outgoing({ successful: false }, handshake, fakeSession('a', 1_001));
    expect(ext.watched).toBe(0);
  });
});
