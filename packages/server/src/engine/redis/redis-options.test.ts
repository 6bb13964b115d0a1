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
      commandTimeoutMs: 5000,
      sharded: false,
      epochTtlMs: 120_000,
      historyChannels: 100_000,
      batchWindowMs: 1,
      probeIntervalMs: 5000,
      replicaAcks: 0,
      replicaAckTimeoutMs: 500,
    });
  });

  it('turns a redis+sentinel:// URL into ioredis Sentinel options', () => {
    const o = resolveRedisOptions({
      url: 'redis+sentinel://app:p%40ss@10.0.0.1:26379,[::1]:26380/mymaster/2',
      redis: { sentinelPassword: 's' },
    });
    expect(o.url).toBeNull();
    expect(o.redis).toEqual({
      sentinelPassword: 's',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'mymaster',
      db: 2,
      username: 'app',
      password: 'p@ss',
      failoverDetector: true,
    });
    // Through Sentinel a publish waits for one replica unless told otherwise.
    expect(o.replicaAcks).toBe(1);
    expect(resolveRedisOptions({ url: 'redis+sentinel://s1:1/m', replicaAcks: 0 }).replicaAcks).toBe(0);
    expect(resolveRedisOptions({ url: 'redis://h:1', replicaAcks: 2 }).replicaAcks).toBe(2);
    expect(resolveRedisOptions({ url: 'redis+sentinel://:pw@s1:1/m' }).redis).toMatchObject({
      password: 'pw',
      name: 'm',
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
    [{ sharded: 'yes' }, /sharded/],
    [{ redis: 'x' }, /redis/],
    [{ redis: { keyPrefix: 'x:' } }, /redis.keyPrefix.*engine option keyPrefix/],
    [{ batchWindowMs: -1 }, /batchWindowMs.*≥ 0/],
    [{ url: 'redis+sentinel://s1:26379' }, /url.*<master name>.*got "redis\+sentinel:\/\/s1:26379"/],
    [{ url: 'redis+sentinel://s1/mymaster' }, /url.*Sentinel "s1" is not host:port/],
    [{ url: 'sentinel://s1:1/m' }, /url.*redis\+sentinel:\/\//],
    [{ batchWindowMs: '1' }, /batchWindowMs/],
    [{ probeIntervalMs: -1 }, /probeIntervalMs.*0 = off/],
    [{ probeIntervalMs: 1.5 }, /probeIntervalMs/],
    [{ replicaAcks: -1 }, /replicaAcks.*0 = off/],
    [{ replicaAcks: 1, cluster: { nodes: [{ port: 7000 }] } }, /replicaAcks.*0 with cluster/],
    [{ replicaAckTimeoutMs: 0 }, /replicaAckTimeoutMs.*positive/],
  ])('rejects %o naming the option', (input, message) => {
    expect(() => resolveRedisOptions(input as never)).toThrow(message);
  });

  it('rejects unknown options by name', () => {
    expect(() => resolveRedisOptions({ heartbeat: 5 } as never)).toThrow(
      /unknown Redis engine option\(s\): heartbeat/,
    );
  });
});
