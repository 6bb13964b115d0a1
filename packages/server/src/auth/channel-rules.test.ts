import { describe, expect, it } from 'vitest';
import { BayouError } from '../errors.js';
import { type AuthView, covers, createChannelPolicy } from './channel-rules.js';

const ada: AuthView = { sub: 'ada', claims: { sub: 'ada', role: 'trader', groups: ['desk-1'] } };
const anon: AuthView = { anonymous: true };

describe('covers', () => {
  it('applies one-segment and any-depth wildcards to channels and to patterns', () => {
    expect(covers('/a/*', '/a/b')).toBe(true);
    expect(covers('/a/*', '/a/b/c')).toBe(false);
    expect(covers('/a/**', '/a/b/c')).toBe(true);
    expect(covers('/a/**', '/a/*')).toBe(true);
    expect(covers('/a/**', '/a/b/**')).toBe(true);
    expect(covers('/a/*', '/a/*')).toBe(true);
    expect(covers('/a/*', '/a/**')).toBe(false);
    expect(covers('/a/b/**', '/a/**')).toBe(false);
    expect(covers('/**', '/x/**')).toBe(true);
    expect(covers('/ab/**', '/a/*')).toBe(false);
  });
});

describe('createChannelPolicy', () => {
  it('defaults to the open server without tokens', () => {
    const p = createChannelPolicy({}, false);
    expect(p.allowed('subscribe', '/x', null)).toBe(true);
    expect(p.allowed('publish', '/x', null)).toBe(true);
  });

  it('defaults with tokens to: authenticated may subscribe, nobody publishes', () => {
    const p = createChannelPolicy({}, true);
    expect(p.allowed('subscribe', '/x', ada)).toBe(true);
    expect(p.allowed('subscribe', '/x', anon)).toBe(false);
    expect(p.allowed('subscribe', '/x', null)).toBe(false);
    expect(p.allowed('publish', '/x', ada)).toBe(false);
  });

  it('lets the token claims alone decide when present', () => {
    const p = createChannelPolicy({ rules: [{ pattern: '/public/**', subscribe: 'anyone' }] }, true);
    const claimed: AuthView = { ...ada, subscribe: ['/chat/*'], publish: ['/chat/room1'] };
    expect(p.allowed('subscribe', '/chat/room1', claimed)).toBe(true);
    expect(p.allowed('subscribe', '/chat/*', claimed)).toBe(true);
    expect(p.allowed('subscribe', '/chat/**', claimed)).toBe(false);
    expect(p.allowed('subscribe', '/public/news', claimed)).toBe(false);
    expect(p.allowed('publish', '/chat/room1', claimed)).toBe(true);
    expect(p.allowed('publish', '/chat/room2', claimed)).toBe(false);
  });

  it('uses the first rule that covers the channel, then the default', () => {
    const p = createChannelPolicy(
      {
        rules: [
          { pattern: '/prices/**', subscribe: 'anyone', publish: 'nobody' },
          { pattern: '/chat/*', subscribe: 'authenticated', publish: 'authenticated' },
          { pattern: '/admin/**', subscribe: { claim: 'role', equals: 'admin' } },
          { pattern: '/desk/**', subscribe: { claim: 'groups', equals: 'desk-1' } },
          { pattern: '/vip/**', subscribe: { claim: 'vip' } },
        ],
      },
      true,
    );
    expect(p.allowed('subscribe', '/prices/EURUSD', anon)).toBe(true);
    expect(p.allowed('publish', '/prices/EURUSD', ada)).toBe(false);
    expect(p.allowed('publish', '/chat/room', ada)).toBe(true);
    expect(p.allowed('publish', '/chat/room', anon)).toBe(false);
    expect(p.allowed('publish', '/other', ada)).toBe(false);
    expect(p.allowed('subscribe', '/admin/x', ada)).toBe(false);
    expect(p.allowed('subscribe', '/admin/x', { sub: 'b', claims: { role: 'admin' } })).toBe(true);
    expect(p.allowed('subscribe', '/desk/1', ada)).toBe(true);
    expect(p.allowed('subscribe', '/vip/x', ada)).toBe(false);
    expect(p.allowed('subscribe', '/vip/x', { sub: 'v', claims: { vip: true } })).toBe(true);
  });

  it('keeps a wildcard subscription out of channels a stricter rule guards', () => {
    const p = createChannelPolicy(
      {
        rules: [
          { pattern: '/user/{sub}/**', subscribe: 'authenticated' },
          { pattern: '/user/**', subscribe: 'nobody' },
          { pattern: '/admin/**', subscribe: { claim: 'role', equals: 'admin' } },
        ],
      },
      true,
    );
    expect(p.allowed('subscribe', '/user/ada/inbox', ada)).toBe(true);
    expect(p.allowed('subscribe', '/user/ada/**', ada)).toBe(true);
    expect(p.allowed('subscribe', '/user/bob/inbox', ada)).toBe(false);
    expect(p.allowed('subscribe', '/user/*', ada)).toBe(false);
    expect(p.allowed('subscribe', '/**', ada)).toBe(false);
    expect(p.allowed('subscribe', '/news/*', ada)).toBe(true);
    expect(p.allowed('subscribe', '/user/ada/inbox', anon)).toBe(false);
  });

  it('skips a placeholder rule whose claim is missing or not a channel segment', () => {
    const p = createChannelPolicy(
      { rules: [{ pattern: '/user/{sub}/*', subscribe: 'anyone' }], default: { subscribe: 'nobody' } },
      true,
    );
    expect(p.allowed('subscribe', '/user/a/b', { sub: 'a/b', claims: { sub: 'a/b' } })).toBe(false);
    expect(p.allowed('subscribe', '/user/x/y', { sub: 'x', claims: { sub: 'x' } })).toBe(true);
  });

  it('refuses a bad configuration, naming the part', () => {
    expect(() => createChannelPolicy({ rules: [{ pattern: 'chat' }] })).toThrow(BayouError);
    expect(() =>
      createChannelPolicy({ rules: [{ pattern: '/a', subscribe: 'everyone' as 'anyone' }] }),
    ).toThrow(/rules\[0\]\.subscribe/);
    expect(() => createChannelPolicy({ default: { publish: { claim: 1 } as never } })).toThrow(
      /default\.publish/,
    );
  });
});
