import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../options.js';

describe('the proxy and webhooks options', () => {
  it('resolves each hook to { url, timeout, headers }, per-hook values over the shared ones', () => {
    const o = resolveOptions({
      proxy: {
        connect: { url: 'http://b/connect', timeout: 700, headers: { 'x-a': '2' } },
        rpc: 'https://b/rpc',
        timeout: 3000,
        headers: { 'x-a': '1', 'x-b': '1' },
      },
    });
    expect(o.proxy).toEqual({
      connect: { url: 'http://b/connect', timeout: 700, headers: { 'x-a': '2', 'x-b': '1' } },
      rpc: { url: 'https://b/rpc', timeout: 3000, headers: { 'x-a': '1', 'x-b': '1' } },
    });
    expect(resolveOptions({ proxy: { publish: 'http://b/p' } }).proxy?.publish?.timeout).toBe(5000);
  });

  it('refuses bad proxy and webhooks options, naming them', () => {
    expect(() => resolveOptions({ proxy: { connect: 'ftp://x' } })).toThrow(
      /"proxy.connect.url" must be an http/,
    );
    expect(() => resolveOptions({ proxy: { conect: 'http://x' } as never })).toThrow(
      /unknown option\(s\) in proxy: conect/,
    );
    expect(() => resolveOptions({ proxy: { subscribe: { url: 'http://x', timeout: 0 } } })).toThrow(
      /"proxy.subscribe.timeout" must be a positive number/,
    );
    expect(() => resolveOptions({ proxy: { headers: { a: 1 } as never } })).toThrow(/"proxy.headers"/);
    expect(() => resolveOptions({ webhooks: { url: 'nope' } })).toThrow(/"webhooks.url" must be an http/);
    expect(() => resolveOptions({ webhooks: { url: 'https://u:p@x/h' } })).toThrow(/without user:password@/);
    expect(() => resolveOptions({ proxy: { rpc: 'http://u:p@x/rpc' } })).toThrow(
      /"proxy.rpc.url" must be a URL without/,
    );
    expect(() => resolveOptions({ webhooks: { url: 'http://x', batchSize: 0 } })).toThrow(
      /"webhooks.batchSize"/,
    );
    expect(() => resolveOptions({ webhooks: { url: 'http://x', retry: 1 } as never })).toThrow(
      /unknown option\(s\) in webhooks: retry/,
    );
  });

  it('fills the webhooks defaults', () => {
    expect(resolveOptions({ webhooks: { url: 'http://x/h' } }).webhooks).toEqual({
      url: 'http://x/h',
      secret: undefined,
      headers: {},
      batchWindow: 250,
      batchSize: 100,
      timeout: 5000,
      retryFor: 300_000,
      maxRetryDelay: 30_000,
      maxQueued: 10_000,
      deadNodeSweep: 2000,
    });
  });
});
