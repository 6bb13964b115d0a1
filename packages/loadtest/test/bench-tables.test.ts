import { describe, expect, it } from 'vitest';
import { parseCpuList } from '../bench/lib.mjs';
import { renderTables } from '../bench/table.mjs';

const row = (median: number) => ({ median, spread: 0, values: [median] });
const lp = (cpuUsPerMsg: number, msgPerSec: number, genCpuUsPerMsg: number, genCores: number) => ({
  msgPerSec: row(msgPerSec),
  cpuUsPerMsg: row(cpuUsPerMsg),
  genCpuUsPerMsg: row(genCpuUsPerMsg),
  genCores: row(genCores),
  rateCpuUsPerMsg: row(cpuUsPerMsg * 1.5),
  lost: row(0),
});

/** A run's flags as the tables read them (what a test leaves out is a default run's). */
const FLAGS = {
  rounds: 3,
  rate: 20000,
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  messageSize: 50,
  outstanding: 5000,
  measure: 5000,
  warmup: 2000,
  latencyDuration: 5000,
  idle: 0,
  stormClients: 0,
  concurrency: 100,
  restartLocalAddresses: '',
  quick: false,
  cpuCount: 2,
};

/** The standard generator's rows: the floor, Bayou and Faye at saturation. */
const STANDARD_ROWS = {
  'lp-floor/long-polling/standard': lp(15, 28000, 41, 1.15),
  'bayou/long-polling/standard': lp(20, 27000, 40, 1.12),
  'faye/long-polling/standard': lp(30, 29000, 36, 1.07),
};

describe('bench --server-cpus', () => {
  it('reads single CPUs, ranges and lists', () => {
    expect(parseCpuList('0', 2)).toEqual([0]);
    expect(parseCpuList('0-2,5', 8)).toEqual([0, 1, 2, 5]);
  });

  it('names the fix for a CPU the machine does not have or a malformed list', () => {
    expect(() => parseCpuList('2', 2)).toThrow(/outside this machine's CPUs 0-1/);
    expect(() => parseCpuList('1-0', 2)).toThrow(/outside/);
    expect(() => parseCpuList('a', 2)).toThrow(/not a CPU number or range/);
  });
});

describe('bench long-polling table', () => {
  const text: string = renderTables({
    summary: {
      ...STANDARD_ROWS,
    },
    servers: [],
    lpServers: ['lp-floor', 'bayou', 'faye'],
    generators: ['standard'],
    stormServers: [],
    flags: FLAGS,
    seconds: 1,
    command: 'pnpm bench',
    fanOut: 100,
    machine: 'test',
  });

  it("shows the generator's own CPU next to each server's", () => {
    const bayou = text.split('\n').find((l) => l.startsWith('| Bayou | standard'));
    expect(bayou).toContain('| 40.00 ±0% | 1.12 ±0% |');
  });

  it('says what the 2× Faye saturation target would ask of the generator', () => {
    // Faye at 30 µs per message on one core: 33,333 msg/s; twice that at the generator's
    // 40 µs per message is 2.67 cores of generator.
    expect(text).toContain(
      'the generator was busy 1.12 cores at 40.0 µs per delivered message against Bayou',
    );
    expect(text).toContain(
      'would deliver about 33,333 msg/s, and twice that would take this generator 2.7 cores',
    );
    expect(text).toContain('this machine has 2');
  });
});

describe('bench long-polling targets', () => {
  it('holds each browser-like generator of the run to them, with the floor against Faye', () => {
    const text: string = renderTables({
      summary: {
        ...STANDARD_ROWS,
        'lp-floor/long-polling/undici': lp(12, 36000, 30, 1.1),
        'bayou/long-polling/undici': lp(13, 70000, 28, 1.1),
        'faye/long-polling/undici': lp(26, 34000, 27, 1.0),
      },
      servers: [],
      lpServers: ['lp-floor', 'bayou', 'faye'],
      generators: ['standard', 'undici'],
      stormServers: [],
      flags: FLAGS,
      seconds: 1,
      command: 'pnpm bench',
      fanOut: 100,
      machine: 'test',
    });
    // standard: Bayou 30 against Faye 45 µs at the rate (1.5× the saturation figures): 0.67×.
    expect(text).toMatch(
      /long-polling \(standard generator\) CPU per delivered message .* 0\.67× Faye's .*NOT met/,
    );
    expect(text).toMatch(
      /long-polling \(undici generator\) CPU per delivered message .* 0\.50× Faye's .*: met/,
    );
    expect(text).toContain("(the raw floor itself: 0.50× Faye's)");
    expect(text).toMatch(
      /long-polling \(undici generator\) delivered msg\/s at saturation 2\.06× Faye's .*: met/,
    );
    expect(text).toMatch(
      /long-polling \(standard generator\) delivered msg\/s at saturation 0\.93× Faye's .*NOT met/,
    );
  });
});
