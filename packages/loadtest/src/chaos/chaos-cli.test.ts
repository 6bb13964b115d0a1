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
    expect(() => parseChaosArgs(['--nope', '1'])).toThrow(/unknown option "--nope"/);
    expect(() => parseChaosArgs(['--chaos', 'soon'])).toThrow(/write e.g. 500ms, 3s or 10m/);
    expect(() => parseChaosArgs(['--transport', 'carrier-pigeon'])).toThrow(/websocket or long-polling/);
    expect(() => parseChaosArgs(['--clients'])).toThrow(/needs a value/);
  });

  it('reports PASS only with nothing lost, duplicated or stranded', () => {
    const { options } = parseChaosArgs([]);
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
      seconds: 1,
    };
    expect(formatChaos(options, base)).toMatch(/PASS$/);
    expect(formatChaos(options, { ...base, lost: 1 })).toMatch(/FAIL$/);
    expect(formatChaos(options, { ...base, duplicated: 2 })).toMatch(/duplicated 2/);
  });
});
