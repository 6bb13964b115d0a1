import { describe, expect, it } from 'vitest';
import { OriginGuard } from './origin-guard.js';

function harness(max?: number) {
  const warnings: { origin: string; transport: string; msg: string }[] = [];
  const log = {
    warn: (obj: object, msg: string) =>
      warnings.push({ ...(obj as { origin: string; transport: string }), msg }),
  };
  const guard = new OriginGuard(['https://app.example'], log, max);
  const request = (origin: string | undefined, transport = 'long-polling') => {
    const headers: Record<string, string> = {};
    const allowed = guard.admit(
      { host: 'bayou.example:8080', ...(origin ? { origin } : {}) },
      { header: (name: string, value: string) => (headers[name] = value) },
      transport,
    );
    return { allowed, headers };
  };
  return { guard, warnings, request };
}

describe('OriginGuard', () => {
  it('logs a refused origin once, with the --allowed-origins fix, whichever transport it tries', () => {
    const { guard, warnings, request } = harness();
    expect(request('http://localhost:5173').allowed).toBe(false);
    expect(request('http://localhost:5173').allowed).toBe(false);
    expect(guard.admitsUpgrade('http://localhost:5173', 'bayou.example:8080')).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ origin: 'http://localhost:5173', transport: 'long-polling' });
    expect(warnings[0]?.msg).toMatch(/--allowed-origins http:\/\/localhost:5173/);
    expect(guard.admitsUpgrade('http://other.example', undefined)).toBe(false);
    expect(warnings.map((w) => w.transport)).toEqual(['long-polling', 'websocket']);
  });

  it('logs nothing for allowed, same-origin and Origin-less requests', () => {
    const { warnings, request } = harness();
    expect(request('https://app.example').allowed).toBe(true);
    expect(request('http://bayou.example:8080').allowed).toBe(true);
    expect(request(undefined).allowed).toBe(true);
    expect(warnings).toHaveLength(0);
  });

  it('lets the refused page read its refusal without credentials', () => {
    const { request } = harness();
    expect(request('http://localhost:5173').headers).toEqual({
      'access-control-allow-origin': 'http://localhost:5173',
      vary: 'Origin',
    });
    expect(request('https://app.example').headers['access-control-allow-credentials']).toBe('true');
  });

  it('remembers at most its bound of origins, forgetting the oldest (which is then logged again)', () => {
    const { guard, warnings, request } = harness(2);
    for (const origin of ['http://a.example', 'http://b.example', 'http://c.example']) request(origin);
    expect(guard.remembered).toBe(2);
    request('http://c.example');
    request('http://b.example');
    expect(warnings).toHaveLength(3);
    request('http://a.example'); // forgotten when c came
    expect(warnings.map((w) => w.origin)).toEqual([
      'http://a.example',
      'http://b.example',
      'http://c.example',
      'http://a.example',
    ]);
    expect(guard.remembered).toBe(2);
  });

  it('quotes at most 200 characters of a huge Origin header', () => {
    const { warnings, request } = harness();
    request(`http://${'x'.repeat(5000)}.example`);
    expect(warnings[0]?.origin).toHaveLength(200);
  });
});
