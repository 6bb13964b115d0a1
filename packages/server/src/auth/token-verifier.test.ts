import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BayouError, HandshakeDeniedError } from '../errors.js';
import { createTokenVerifier } from './token-verifier.js';

const secret = 'a-test-secret-that-is-at-least-32-chars';
const key = new TextEncoder().encode(secret);
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

function hs256(claims: Record<string, unknown>, k: Uint8Array = key): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(k);
}

async function rejection(p: Promise<unknown>): Promise<HandshakeDeniedError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HandshakeDeniedError);
  return err as HandshakeDeniedError;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('createTokenVerifier with an HS256 secret', () => {
  const verifier = createTokenVerifier({ secret });

  it('accepts a good token and reads sub, exp and the bayou claims', async () => {
    const exp = inAnHour();
    const token = await hs256({ sub: 'ada', exp, bayou: { subscribe: ['/chat/**'], publish: ['/chat/a'] } });
    expect(await verifier.verify(token)).toMatchObject({
      sub: 'ada',
      exp,
      subscribe: ['/chat/**'],
      publish: ['/chat/a'],
    });
  });

  it('refuses a missing, malformed, wrongly signed or unsigned token with advice reconnect none', async () => {
    expect((await rejection(verifier.verify(undefined))).problem).toBe('missing');
    expect((await rejection(verifier.verify(42))).problem).toBe('malformed');
    expect((await rejection(verifier.verify('not.a.jwt'))).problem).toBe('invalid');
    const other = new TextEncoder().encode('another-secret-another-secret-another');
    const forged = await rejection(verifier.verify(await hs256({ sub: 'ada', exp: inAnHour() }, other)));
    expect(forged).toMatchObject({ problem: 'invalid', bayeuxError: '403::handshake_denied' });
    expect(forged.advice).toEqual({ reconnect: 'none', interval: 0 });
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'ada', exp: inAnHour() })}.`;
    expect((await rejection(verifier.verify(unsigned))).problem).toBe('invalid');
  });

  it('tells an expired token apart: advice reconnect handshake', async () => {
    const err = await rejection(verifier.verify(await hs256({ sub: 'ada', exp: 1_000_000 })));
    expect(err.problem).toBe('expired');
    expect(err.advice).toEqual({ reconnect: 'handshake', interval: 0 });
  });

  it('refuses tokens without exp or sub, and bayou claims of the wrong shape', async () => {
    expect((await rejection(verifier.verify(await hs256({ sub: 'ada' })))).problem).toBe('invalid');
    expect((await rejection(verifier.verify(await hs256({ exp: inAnHour() })))).problem).toBe('invalid');
    const bad = await rejection(
      verifier.verify(await hs256({ sub: 'a', exp: inAnHour(), bayou: { subscribe: '/x' } })),
    );
    expect(bad.message).toContain('bayou.subscribe');
    const lax = createTokenVerifier({ secret, requireExp: false });
    expect(await lax.verify(await hs256({ sub: 'ada' }))).toMatchObject({ sub: 'ada', exp: undefined });
  });

  it('checks issuer and audience when configured', async () => {
    const v = createTokenVerifier({ secret, issuer: 'app', audience: 'bayou' });
    const good = await hs256({ sub: 'a', exp: inAnHour(), iss: 'app', aud: 'bayou' });
    expect((await v.verify(good)).sub).toBe('a');
    const wrong = await hs256({ sub: 'a', exp: inAnHour(), iss: 'other', aud: 'bayou' });
    expect((await rejection(v.verify(wrong))).problem).toBe('invalid');
  });

  it('refuses bad options with a BayouError', () => {
    expect(() => createTokenVerifier({})).toThrow(BayouError);
    expect(() => createTokenVerifier({ secret: 'short' })).toThrow(/at least 32/);
    expect(() => createTokenVerifier({ secret, jwksUrl: 'http://x' })).toThrow(BayouError);
    expect(() => createTokenVerifier({ jwksUrl: 'not a url' })).toThrow(/jwksUrl/);
  });
});

describe('createTokenVerifier with a JWKS URL', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  const keys: { kid: string; privateKey: PrivateKey; jwk: Record<string, unknown> }[] = [];

  async function addKey(kid: string, alg: 'RS256' | 'ES256'): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair(alg);
    keys.push({ kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } });
  }

  function sign(kid: string, alg: string, claims: Record<string, unknown>): Promise<string> {
    const k = keys.find((x) => x.kid === kid);
    return new SignJWT(claims)
      .setProtectedHeader({ alg, kid })
      .sign((k as { privateKey: PrivateKey }).privateKey);
  }

  beforeAll(async () => {
    await addKey('rsa-1', 'RS256');
    await addKey('ec-1', 'ES256');
    server = createServer((_req, res) => {
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });

  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('verifies RS256 and ES256 tokens, caches the key set and refetches for a new kid', async () => {
    const v = createTokenVerifier({ jwksUrl: url, jwksCooldown: 0 });
    expect((await v.verify(await sign('rsa-1', 'RS256', { sub: 'r', exp: inAnHour() }))).sub).toBe('r');
    expect((await v.verify(await sign('ec-1', 'ES256', { sub: 'e', exp: inAnHour() }))).sub).toBe('e');
    expect(fetches).toBe(1);
    await addKey('rsa-2', 'RS256'); // a rotated key: unknown kid → one refetch
    expect((await v.verify(await sign('rsa-2', 'RS256', { sub: 'n', exp: inAnHour() }))).sub).toBe('n');
    expect(fetches).toBe(2);
  });

  it('refuses an HS256 token signed with a public key as secret, and an unknown kid', async () => {
    const v = createTokenVerifier({ jwksUrl: url });
    const pub = new TextEncoder().encode(JSON.stringify(keys[0]?.jwk));
    const confused = await new SignJWT({ sub: 'x', exp: inAnHour() })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .sign(pub);
    expect((await rejection(v.verify(confused))).problem).toBe('invalid');
    const { privateKey } = await generateKeyPair('RS256');
    const stranger = await new SignJWT({ sub: 'x', exp: inAnHour() })
      .setProtectedHeader({ alg: 'RS256', kid: 'nope' })
      .sign(privateKey);
    expect((await rejection(v.verify(stranger))).problem).toBe('invalid');
  });

  it('refuses every token when the key server is down', async () => {
    const v = createTokenVerifier({ jwksUrl: 'http://127.0.0.1:1/jwks.json', jwksTimeout: 1000 });
    const token = await sign('rsa-1', 'RS256', { sub: 'r', exp: inAnHour() });
    expect((await rejection(v.verify(token))).problem).toBe('invalid');
  });
});
