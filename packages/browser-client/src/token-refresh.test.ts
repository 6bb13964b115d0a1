import { afterEach, describe, expect, it, vi } from 'vitest';
import { refreshDelay, TokenRefresh, tokenExpiry } from './token-refresh.js';

/** An unsigned JWT-shaped token with `payload` (signature checks are the server's business). */
function jwt(payload: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}.sig`;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('tokenExpiry', () => {
  it('reads exp (seconds) from a base64url payload, non-ASCII claims included', () => {
    expect(tokenExpiry(jwt({ sub: 'zoë ✓', exp: 1_700_000_123 }))).toBe(1_700_000_123_000);
  });

  it('is null without exp, for a non-number exp, and for what is no JWT', () => {
    expect(tokenExpiry(jwt({ sub: 'a' }))).toBeNull();
    expect(tokenExpiry(jwt({ exp: '1700000000' }))).toBeNull();
    expect(tokenExpiry('opaque-api-token')).toBeNull();
    expect(tokenExpiry('a.!!!.c')).toBeNull();
    expect(tokenExpiry('a..c')).toBeNull();
  });
});

describe('refreshDelay', () => {
  it('refreshes the margin before expiry, but at most half way through what is left', () => {
    expect(refreshDelay(100_000, 0, 30_000)).toBe(70_000);
    expect(refreshDelay(3_000, 0, 30_000)).toBe(1_500);
    expect(refreshDelay(1_000, 2_000, 30_000)).toBe(0);
  });
});

describe('TokenRefresh', () => {
  it('asks the function again before expiry and hands the new token over once', async () => {
    vi.useFakeTimers({ now: 0 });
    let n = 0;
    const renewed: (string | null)[] = [];
    const tokens = new TokenRefresh(
      () => jwt({ n: ++n, exp: (Date.now() + 10_000) / 1000 }),
      2_000,
      () => renewed.push(tokens.pending),
    );
    const first = await tokens.forHandshake();
    expect(tokenExpiry(first as string)).toBe(10_000);
    tokens.start();
    await vi.advanceTimersByTimeAsync(7_999);
    expect(renewed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(renewed).toHaveLength(1);
    expect(tokenExpiry(renewed[0] as string)).toBe(18_000);
    tokens.accepted(renewed[0] as string);
    expect(tokens.pending).toBeNull();
    // The next refresh is scheduled from the new token.
    await vi.advanceTimersByTimeAsync(8_000);
    expect(renewed).toHaveLength(2);
    tokens.stop();
  });

  it('does nothing for a fixed token, and drops a refresh that a handshake overtook', async () => {
    vi.useFakeTimers({ now: 0 });
    const fixed = new TokenRefresh(jwt({ exp: 10 }), 2_000, () => {
      throw new Error('no refresh for a string');
    });
    expect(await fixed.forHandshake()).toBe(jwt({ exp: 10 }));
    fixed.start();
    await vi.advanceTimersByTimeAsync(20_000);

    let release: (token: string) => void = () => undefined;
    let calls = 0;
    const renewed: string[] = [];
    const slow = new TokenRefresh(
      () => {
        calls++;
        if (calls === 1) return jwt({ exp: 10 });
        return new Promise<string>((resolve) => {
          release = resolve;
        });
      },
      2_000,
      () => renewed.push('renewed'),
    );
    await slow.forHandshake();
    slow.start();
    await vi.advanceTimersByTimeAsync(8_000); // the refresh is waiting for its token
    slow.stop(); // the connection was lost meanwhile
    release(jwt({ exp: 20 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(renewed).toEqual([]);
    expect(slow.pending).toBeNull();
  });

  it('sends no token that does not expire later than the one the server has', async () => {
    vi.useFakeTimers({ now: 0 });
    const same = jwt({ exp: 10 });
    const renewed: string[] = [];
    const cached = new TokenRefresh(
      () => same,
      2_000,
      () => renewed.push('renewed'),
    );
    await cached.forHandshake();
    cached.start();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(renewed).toEqual([]);
  });
});
