import { describe, expect, it } from 'vitest';
import { parseBenchFlags } from '../bench/flags.mjs';

const DEFAULTS = { rounds: 3, clients: 1000, servers: 'bayou,faye', quick: false };
const QUICK = { rounds: 1, clients: 200 };

describe('the bench scripts flags', () => {
  it('reads each flag as its default type, in both forms, and keeps the other defaults', () => {
    const { flags, given } = parseBenchFlags(['--rounds', '5', '--servers=bayou'], DEFAULTS, QUICK);
    expect(flags).toEqual({ rounds: 5, clients: 1000, servers: 'bayou', quick: false });
    expect([...given]).toEqual(['rounds', 'servers']);
  });

  it('shrinks with --quick every size the command line did not set', () => {
    expect(parseBenchFlags(['--quick', '--clients', '50'], DEFAULTS, QUICK).flags).toEqual({
      rounds: 1,
      clients: 50,
      servers: 'bayou,faye',
      quick: true,
    });
    expect(parseBenchFlags(['--no-quick'], DEFAULTS, QUICK).flags.rounds).toBe(3);
  });

  it('rejects a number flag without a number, an unknown flag and a stray argument, naming them', () => {
    expect(() => parseBenchFlags(['--rounds', 'many'], DEFAULTS)).toThrow(
      '--rounds needs a number, got many',
    );
    expect(() => parseBenchFlags(['--round', '2'], DEFAULTS)).toThrow('unknown option --round');
    expect(() => parseBenchFlags(['bayou'], DEFAULTS)).toThrow('unexpected argument bayou');
  });

  it('notes --help without reading further', () => {
    expect(parseBenchFlags(['--help'], DEFAULTS).help).toBe(true);
  });
});
