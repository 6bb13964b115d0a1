import { describe, expect, it } from 'vitest';
import { readCookie } from './http-request.js';

describe('readCookie', () => {
  it('finds a cookie by its exact name, wherever it stands in the header', () => {
    expect(readCookie('BAYEUX_BROWSER=abc', 'BAYEUX_BROWSER')).toBe('abc');
    expect(readCookie('a=1; BAYEUX_BROWSER=abc; b=2', 'BAYEUX_BROWSER')).toBe('abc');
    expect(readCookie('a=1;BAYEUX_BROWSER = abc ', 'BAYEUX_BROWSER')).toBe('abc');
    expect(readCookie('a=x=y; BAYEUX_BROWSER=v=w', 'BAYEUX_BROWSER')).toBe('v=w');
  });

  it('does not take a longer name, a value that mentions the name, or an empty value', () => {
    expect(readCookie('XBAYEUX_BROWSER=no', 'BAYEUX_BROWSER')).toBeNull();
    expect(readCookie('BAYEUX_BROWSER_2=no', 'BAYEUX_BROWSER')).toBeNull();
    expect(readCookie('a=BAYEUX_BROWSER=no', 'BAYEUX_BROWSER')).toBeNull();
    expect(readCookie('XBAYEUX_BROWSER=no; BAYEUX_BROWSER=yes', 'BAYEUX_BROWSER')).toBe('yes');
    expect(readCookie('BAYEUX_BROWSER=; a=1', 'BAYEUX_BROWSER')).toBeNull();
    expect(readCookie('BAYEUX_BROWSER', 'BAYEUX_BROWSER')).toBeNull();
    expect(readCookie(undefined, 'BAYEUX_BROWSER')).toBeNull();
  });
});
