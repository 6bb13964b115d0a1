import { describe, expect, it } from 'vitest';
import { checkAllowedOrigins, corsFor, originAllowed } from './request-info.js';

const host = 'push.example.com:8080';

describe('originAllowed', () => {
  it('never refuses a request without an Origin header', () => {
    expect(originAllowed([], undefined, host)).toBe(true);
    expect(originAllowed([], undefined)).toBe(true);
  });

  it('allows only the same origin by default', () => {
    expect(originAllowed([], 'http://push.example.com:8080', host)).toBe(true);
    expect(originAllowed([], 'https://PUSH.example.com:8080', host)).toBe(true);
    expect(originAllowed([], 'http://evil.example', host)).toBe(false);
    expect(originAllowed([], 'http://push.example.com', host)).toBe(false);
    expect(originAllowed([], 'null', host)).toBe(false);
    expect(originAllowed([], 'http://push.example.com:8080')).toBe(false);
  });

  it('allows listed origins, subdomain patterns and, if asked, every origin', () => {
    const list = checkAllowedOrigins(['https://App.example.com', 'https://*.corp.example']);
    expect(originAllowed(list, 'https://app.example.com', host)).toBe(true);
    expect(originAllowed(list, 'http://app.example.com', host)).toBe(false);
    expect(originAllowed(list, 'https://a.b.corp.example', host)).toBe(true);
    expect(originAllowed(list, 'https://corp.example', host)).toBe(false);
    expect(originAllowed(list, 'https://evilcorp.example', host)).toBe(false);
    expect(originAllowed(['*'], 'https://anything.example', host)).toBe(true);
  });
});

describe('corsFor', () => {
  it('sends no CORS headers without an Origin or for the same origin', () => {
    expect(corsFor([], undefined, host)).toEqual({ allowed: true, headers: {} });
    expect(corsFor([], 'http://push.example.com:8080', host)).toEqual({ allowed: true, headers: {} });
  });

  it('grants credentials to a listed origin only, echoing that origin', () => {
    expect(corsFor(['https://app.example.com'], 'https://app.example.com', host)).toEqual({
      allowed: true,
      headers: {
        'access-control-allow-origin': 'https://app.example.com',
        'access-control-allow-credentials': 'true',
        vary: 'Origin',
      },
    });
  });

  it('never combines a wildcard with credentials', () => {
    const answer = corsFor(['*'], 'https://evil.example', host);
    expect(answer).toEqual({ allowed: true, headers: { 'access-control-allow-origin': '*' } });
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('refuses a credentialed request from an unlisted origin with no CORS grant', () => {
    const answer = corsFor(['https://app.example.com'], 'https://evil.example', host);
    expect(answer.allowed).toBe(false);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('checkAllowedOrigins', () => {
  it('normalizes good entries and names a bad one', () => {
    expect(checkAllowedOrigins(['*', 'null', 'HTTP://localhost:3000', 'http://[::1]:8080'])).toEqual([
      '*',
      'null',
      'http://localhost:3000',
      'http://[::1]:8080',
    ]);
    expect(() => checkAllowedOrigins(['https://app.example.com/'])).toThrow(
      /"https:\/\/app.example.com\/" is not/,
    );
    expect(() => checkAllowedOrigins(['app.example.com'])).toThrow(/not an origin/);
  });
});
