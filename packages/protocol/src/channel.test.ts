import { describe, expect, it } from 'vitest';
import { expandChannel, isWildcard, matches, parseChannel } from './channel.js';

describe('parseChannel', () => {
  it.each([
    ['/chat/room-1', 'broadcast', null],
    ['/meta/connect', 'meta', null],
    ['/service/echo', 'service', null],
    ['/a/*', 'broadcast', '*'],
    ['/a/b/**', 'broadcast', '**'],
    ['/**', 'broadcast', '**'],
    ['/fx/EUR.USD', 'broadcast', null],
  ])('accepts %s as a %s channel with wildcard %s', (name, kind, wildcard) => {
    expect(parseChannel(name)).toEqual({ kind, wildcard });
  });

  it.each([
    ['chat'],
    ['/'],
    ['//a'],
    ['/a//b'],
    ['/a/'],
    ['/a/*/b'],
    ['/a/**/b'],
    ['/a b'],
    ['/a/<x>'],
    [42],
    [null],
  ])('rejects %s', (name) => {
    expect(parseChannel(name)).toBeNull();
  });

  it('rejects names longer than 1024 characters', () => {
    expect(parseChannel(`/${'a'.repeat(1024)}`)).toBeNull();
  });
});

describe('matches', () => {
  it('matches one segment with /*', () => {
    expect(matches('/a/*', '/a/b')).toBe(true);
    expect(matches('/a/*', '/a/b/c')).toBe(false);
    expect(matches('/a/*', '/a')).toBe(false);
    expect(matches('/a/*', '/ab/c')).toBe(false);
  });

  it('matches any depth with /**', () => {
    expect(matches('/a/**', '/a/b')).toBe(true);
    expect(matches('/a/**', '/a/b/c/d')).toBe(true);
    expect(matches('/a/**', '/a')).toBe(false);
    expect(matches('/a/**', '/ab/c')).toBe(false);
    expect(matches('/**', '/x/y')).toBe(true);
  });

  it('matches a plain channel only by equality', () => {
    expect(matches('/a/b', '/a/b')).toBe(true);
    expect(matches('/a/b', '/a/bc')).toBe(false);
  });
});

describe('expandChannel', () => {
  it('lists the channel, its /* and /** at every ancestor', () => {
    expect(expandChannel('/a/b/c')).toEqual(['/a/b/c', '/a/b/*', '/a/b/**', '/a/**', '/**']);
    expect(expandChannel('/a')).toEqual(['/a', '/*', '/**']);
  });

  it('produces exactly the patterns that match', () => {
    const channel = '/x/y/z';
    const candidates = ['/x/y/z', '/x/y/*', '/x/*', '/x/**', '/x/y/**', '/*', '/**', '/x/y/z/*', '/q/**'];
    const expanded = new Set(expandChannel(channel));
    for (const c of candidates) expect(expanded.has(c)).toBe(matches(c, channel));
  });
});

describe('isWildcard', () => {
  it('tells patterns from channels', () => {
    expect(isWildcard('/a/*')).toBe(true);
    expect(isWildcard('/a/**')).toBe(true);
    expect(isWildcard('/a/b')).toBe(false);
  });
});
