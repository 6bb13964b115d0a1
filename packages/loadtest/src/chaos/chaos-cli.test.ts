import { describe, expect, it } from 'vitest';
import { formatChaos, parseChaosArgs } from './chaos-cli.js';

describe('bayou-loadtest chaos options', () => {
  it('has documented defaults and reads times in ms, s and m', () => {
    const { options, json } = parseChaosArgs(['--chaos', '2s', '--duration', '10m', '--outage', '1500ms']);
    expect(options).toMatchObject({
      transport: 'websocket',
      clients: 1000,
      rooms: 100,
      roomsPerClient: 10,
      chaosInterval: 2000,
      duration: 600_000,
      outageMs: 1500,
      outageFraction: 0.2,
    });
    expect(json).toBe('');
  });

  it('refuses unknown options, bad times and bad transports with the fix in the message', () => {
    expect(() => parseChaosArgs(['--nope', '1'])).toThrow(/unknown option --nope/);
    expect(() => parseChaosArgs(['--chaos', 'soon'])).toThrow(/write e.g. 500ms, 3s or 10m/);
    expect(() => parseChaosArgs(['--transport', 'carrier-pigeon'])).toThrow(
      /websocket, long-polling or streaming, got "carrier-pigeon"/,
    );
    expect(parseChaosArgs(['--transport', 'streaming']).options).toMatchObject({ transport: 'streaming' });
    expect(() => parseChaosArgs(['--clients'])).toThrow(/needs a value/);
  });

  it('takes the cluster defaults under --cluster: mixed transports, 10 rooms, one each, 20 msg/s', () => {
    const parsed = parseChaosArgs([
      '--cluster',
      '3',
      '--kill-every',
      '30s',
      '--redis-restart-at',
      '5m',
      '--duration',
      '10m',
    ]);
    expect(parsed.mode).toBe('cluster');
    expect(parsed.options).toEqual({
      nodes: 3,
      transport: 'mixed',
      clients: 1000,
      rooms: 10,
      roomsPerClient: 1,
      rate: 20,
      duration: 600_000,
      killEvery: 30_000,
      restart: 'kill',
      redisRestartAt: 300_000,
      workers: 4,
      drainMs: 30_000,
      seed: 1,
      prefix: '/chaos/',
      logDir: '',
      target: '',
      apiKey: '',
      storm: 'none',
      stormAt: 15_000,
      probePercent: 4,
      balancer: 'node',
    });
    expect(parseChaosArgs(['--cluster', '3', '--balancer', 'nginx']).options).toMatchObject({
      balancer: 'nginx',
    });
    expect(parseChaosArgs(['--cluster', '3', '--restart', 'rolling', '--rooms', '4']).options).toMatchObject({
      restart: 'rolling',
      rooms: 4,
    });
  });

  it('runs against a given cluster with --target and --api-key, restarting nothing', () => {
    const parsed = parseChaosArgs(['--target', 'http://127.0.0.1:8080/bayeux', '--api-key', 'k'.repeat(16)]);
    expect(parsed.mode).toBe('cluster');
    expect(parsed.options).toMatchObject({
      target: 'http://127.0.0.1:8080/bayeux',
      nodes: 0,
      killEvery: 0,
      redisRestartAt: 0,
    });
    expect(() => parseChaosArgs(['--target', 'http://127.0.0.1:8080/bayeux'])).toThrow(/needs --api-key/);
    expect(() =>
      parseChaosArgs(['--target', 'http://x/bayeux', '--api-key', 'k', '--kill-every', '5s']),
    ).toThrow(/--kill-every cannot apply/);
    expect(() => parseChaosArgs(['--target', 'redis://x', '--api-key', 'k'])).toThrow(
      /http\(s\) Bayeux endpoint/,
    );
  });

  it('refuses flags of the other mode, a bad restart mode and a one-node cluster, saying what to do', () => {
    expect(() => parseChaosArgs(['--kill-every', '5s'])).toThrow(
      /--kill-every applies to a cluster run: add --cluster 3/,
    );
    expect(() => parseChaosArgs(['--cluster', '3', '--url', 'http://x/bayeux'])).toThrow(
      /does not apply with --cluster/,
    );
    expect(() => parseChaosArgs(['--cluster', '3', '--restart', 'gently'])).toThrow(/kill or rolling/);
    expect(() => parseChaosArgs(['--cluster', '3', '--balancer', 'haproxy'])).toThrow(
      /--balancer must be nginx or node, got "haproxy"/,
    );
    expect(() => parseChaosArgs(['--balancer', 'nginx'])).toThrow(/--balancer applies to a cluster run/);
    expect(() =>
      parseChaosArgs(['--target', 'http://x/bayeux', '--api-key', 'k', '--balancer', 'nginx']),
    ).toThrow(/--balancer cannot apply/);
    expect(() => parseChaosArgs(['--cluster', '1'])).toThrow(/at least 2/);
    expect(() => parseChaosArgs(['--transport', 'mixed'])).toThrow(/long-polling or streaming, got "mixed"/);
  });

  it('reports PASS only with nothing lost, duplicated or stranded', () => {
    const parsed = parseChaosArgs([]);
    if (parsed.mode !== 'connections') throw new Error('expected the connection chaos');
    const { options } = parsed;
    const base = {
      published: 10,
      expected: 30,
      delivered: 30,
      lost: 0,
      duplicated: 0,
      kills: 3,
      outages: 1,
      gaps: 0,
      stranded: 0,
      onTransport: { websocket: 1000 },
      seconds: 1,
    };
    expect(formatChaos(options, base)).toMatch(/PASS$/);
    expect(formatChaos(options, { ...base, lost: 1 })).toMatch(/FAIL$/);
    expect(formatChaos(options, { ...base, duplicated: 2 })).toMatch(/duplicated 2/);
  });
});
