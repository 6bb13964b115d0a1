import { describe, expect, it } from 'vitest';
import { resolveRedisOptions } from './redis-options.js';

describe('resolveRedisOptions', () => {
  it('fills in every default', () => {
    expect(resolveRedisOptions()).toEqual({
      url: null,
      redis: {},
      cluster: null,
      keyPrefix: 'bayou:',
      heartbeatMs: 1000,
      nodeTtlMs: 5000,
      forwardTimeoutMs: 45_000,
      commandTimeoutMs: 5000,
      sharded: false,
      epochTtlMs: 120_000,
      historyChannels: 100_000,
      batchWindowMs: 1,
    });
  });

  it('turns sharded pub/sub on for a Redis Cluster', () => {
    const o = resolveRedisOptions({ cluster: { nodes: [{ host: '10.0.0.1', port: 7000 }] } });
    expect(o.sharded).toBe(true);
    expect(() => resolveRedisOptions({ cluster: { nodes: [] } })).toThrow(/cluster/);
    expect(() => resolveRedisOptions({ cluster: { nodes: [{ port: 7000 }] }, sharded: false })).toThrow(
      /sharded/,
    );
  });

  it.each([
    [{ url: 'http://x' }, /url/],
    [{ keyPrefix: 'a{b}' }, /keyPrefix/],
    [{ heartbeatMs: 0 }, /heartbeatMs/],
    [{ heartbeatMs: 2000, nodeTtlMs: 1000 }, /nodeTtlMs.*more than heartbeatMs/],
    [{ forwardTimeoutMs: -1 }, /forwardTimeoutMs/],
    [{ sharded: 'yes' }, /sharded/],
    [{ redis: 'x' }, /redis/],
    [{ redis: { keyPrefix: 'x:' } }, /redis.keyPrefix.*engine option keyPrefix/],
    [{ batchWindowMs: -1 }, /batchWindowMs.*≥ 0/],
    [{ batchWindowMs: '1' }, /batchWindowMs/],
  ])('rejects %o naming the option', (input, message) => {
    expect(() => resolveRedisOptions(input as never)).toThrow(message);
  });

  it('rejects unknown options by name', () => {
    expect(() => resolveRedisOptions({ heartbeat: 5 } as never)).toThrow(
      /unknown Redis engine option\(s\): heartbeat/,
    );
  });
});
