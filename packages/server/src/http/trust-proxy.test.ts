import { describe, expect, it } from 'vitest';
import { BayouError } from '../errors.js';
import { parseTrustProxy, resolveTrustProxy } from './trust-proxy.js';

describe('resolveTrustProxy', () => {
  it("passes Fastify's forms through, a string list tidied", () => {
    expect(resolveTrustProxy(undefined)).toBeUndefined();
    expect(resolveTrustProxy(false)).toBeUndefined();
    expect(resolveTrustProxy(true)).toBe(true);
    expect(resolveTrustProxy(' 10.0.0.0/8 , loopback,')).toBe('10.0.0.0/8,loopback');
    expect(resolveTrustProxy(['::1', '192.168.0.0/16'])).toEqual(['::1', '192.168.0.0/16']);
    const fn = (address: string) => address === '10.0.0.1';
    expect(resolveTrustProxy(fn)).toBe(fn);
  });

  it('refuses a bad address, an empty list, a hop count and other types with BAYOU_ERR_INVALID_OPTION', () => {
    for (const bad of ['10.0.0.300', '127.0.0.1/33', 'proxy.example.com', ' , ', 2, [3], {}]) {
      const err = (() => {
        try {
          resolveTrustProxy(bad);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(BayouError);
      expect((err as BayouError).code).toBe('BAYOU_ERR_INVALID_OPTION');
      expect((err as Error).message).toMatch(/^option "trustProxy" \(--trust-proxy, BAYOU_TRUST_PROXY\)/);
    }
    expect(() => resolveTrustProxy(1)).toThrow(/hop count \(1\): Fastify then trusts no peer/);
  });
});

describe('parseTrustProxy', () => {
  it('reads booleans and numbers as such, anything else as a list', () => {
    expect(parseTrustProxy('TRUE')).toBe(true);
    expect(parseTrustProxy('no')).toBe(false);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback,10.0.0.1')).toBe('loopback,10.0.0.1');
  });
});
