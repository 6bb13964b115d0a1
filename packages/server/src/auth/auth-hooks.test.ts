import type { Message } from '@bayou/protocol';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { HandshakeDeniedError } from '../errors.js';
import type { RequestInfo } from '../options.js';
import type { Session } from '../session/session.js';
import { WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import { authExpiresAt, createAuthHooks } from './auth-hooks.js';

const secret = 'a-test-secret-that-is-at-least-32-chars';
const request: RequestInfo = {
  transport: 'websocket',
  carrier: WEBSOCKET_CARRIER,
  headers: {},
  url: '/bayeux',
  remoteAddress: '127.0.0.1',
};

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
}

function handshake(t?: unknown): Message {
  return {
    channel: '/meta/handshake',
    ...(t !== undefined ? { ext: { auth: { token: t } } } : {}),
  } as Message;
}

function session(auth: Record<string, unknown> | null): Session {
  return { auth } as Session;
}

const msg = { channel: '/x' } as Message;

describe('createAuthHooks', () => {
  it('installs no hooks for the open server', () => {
    const h = createAuthHooks();
    expect(h).toMatchObject({ authenticate: undefined, canSubscribe: undefined, canPublish: undefined });
  });

  it('turns a good token into session.auth and refuses the rest with typed errors', async () => {
    const h = createAuthHooks({ tokens: { secret } });
    const exp = Math.floor(Date.now() / 1000) + 60;
    const auth = await h.authenticate?.(handshake(await token({ sub: 'ada', exp, role: 'x' })), request);
    expect(auth).toEqual({ sub: 'ada', exp, claims: { sub: 'ada', exp, role: 'x' } });
    expect(authExpiresAt(auth as Record<string, unknown>)).toBe(exp * 1000);
    await expect(h.authenticate?.(handshake(), request)).rejects.toBeInstanceOf(HandshakeDeniedError);
    const expired = await token({ sub: 'ada', exp: 1 });
    await expect(h.authenticate?.(handshake(expired), request)).rejects.toMatchObject({
      problem: 'expired',
      advice: { reconnect: 'handshake' },
    });
  });

  it('accepts anonymous handshakes only when asked, and never a bad token', async () => {
    const h = createAuthHooks({ tokens: { secret }, allowAnonymous: true });
    expect(await h.authenticate?.(handshake(), request)).toEqual({ anonymous: true });
    await expect(h.authenticate?.(handshake('garbage'), request)).rejects.toBeInstanceOf(
      HandshakeDeniedError,
    );
  });

  it('runs the application hooks after the built-in checks, which they can only narrow', async () => {
    const seen: string[] = [];
    const h = createAuthHooks({
      tokens: { secret },
      authenticate: (m) =>
        (m.ext as { room?: string }).room === 'no' ? false : { room: 'lobby', sub: 'forged' },
      canSubscribe: (_s, channel) => {
        seen.push(channel);
        return channel !== '/x/blocked';
      },
    });
    const t = await token({ sub: 'ada', exp: Math.floor(Date.now() / 1000) + 60 });
    const auth = await h.authenticate?.(handshake(t), request);
    expect(auth).toMatchObject({ sub: 'ada', room: 'lobby' });
    const denied = { ...handshake(t), ext: { auth: { token: t }, room: 'no' } } as Message;
    expect(await h.authenticate?.(denied, request)).toBe(false);
    const s = session(auth as Record<string, unknown>);
    expect(await h.canSubscribe?.(s, '/x/ok', msg)).toBe(true);
    expect(await h.canSubscribe?.(s, '/x/blocked', msg)).toBe(false);
    expect(await h.canSubscribe?.(session({ anonymous: true }), '/x/ok', msg)).toBe(false);
    expect(seen).toEqual(['/x/ok', '/x/blocked']);
    expect(await h.canPublish?.(s, '/x/ok', msg)).toBe(false);
  });

  it('denies channel use once the token has expired', async () => {
    let now = 1_000_000_000_000;
    const h = createAuthHooks({ tokens: { secret, clockTolerance: 0 }, now: () => now });
    const s = session({ sub: 'ada', exp: now / 1000 + 10, claims: {} });
    expect(h.canSubscribe?.(s, '/a', msg)).toBe(true);
    now += 10_000;
    expect(h.canSubscribe?.(s, '/a', msg)).toBe(false);
  });

  it('applies configured rules without tokens too', () => {
    const h = createAuthHooks({ channels: { rules: [{ pattern: '/ro/**', publish: 'nobody' }] } });
    expect(h.authenticate).toBeUndefined();
    expect(h.canPublish?.(session(null), '/ro/x', msg)).toBe(false);
    expect(h.canPublish?.(session(null), '/rw', msg)).toBe(true);
  });

  it('refreshes the token of a session when the new one verifies and names the same sub', async () => {
    const h = createAuthHooks({ tokens: { secret } });
    const soon = Math.floor(Date.now() / 1000) + 60;
    const s = session({ sub: 'ada', exp: 1, subscribe: ['/old/*'], claims: {}, room: 'kept' });
    const fresh = await token({ sub: 'ada', exp: soon + 600, bayou: { publish: ['/p'] } });
    const connect = (t: string) => ({ channel: '/meta/connect', ext: { auth: { token: t } } }) as Message;
    const next = await h.refresh(s, connect(fresh));
    expect(next).toMatchObject({ sub: 'ada', exp: soon + 600, publish: ['/p'], room: 'kept' });
    expect(next?.subscribe).toBeUndefined();
    expect(s.auth?.exp).toBe(1); // the extension applies it once the connect is accepted
    const other = await token({ sub: 'bob', exp: soon });
    await expect(h.refresh(s, connect(other))).rejects.toThrow(/same "sub"/);
    await expect(h.refresh(s, connect('junk'))).rejects.toBeInstanceOf(HandshakeDeniedError);
    expect(await createAuthHooks().refresh(s, connect(fresh))).toBeNull();
  });
});
