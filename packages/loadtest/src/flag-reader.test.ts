import { describe, expect, it } from 'vitest';
import { LoadtestErrors } from './errors.js';
import { type FlagDef, kebabFlag, readFlags } from './flag-reader.js';

const DEFS: FlagDef<'rounds' | 'quick' | 'serverCpus'>[] = [
  { key: 'rounds', flag: 'rounds', isSwitch: false },
  { key: 'quick', flag: 'quick', isSwitch: true },
  { key: 'serverCpus', flag: kebabFlag('serverCpus'), isSwitch: false },
];

describe('the flag reader shared by the CLI and the bench scripts', () => {
  it('reads --flag value, --flag=value, switches and --no-switch, in order, beside positionals', () => {
    const { tokens, help } = readFlags(
      ['chat', '--rounds', '3', '--server-cpus=0-1', '--quick', '--no-quick', '--quick=false'],
      DEFS,
    );
    expect(help).toBe(false);
    expect(tokens.map((t) => (t.kind === 'flag' ? [t.def.key, t.raw] : t.value))).toEqual([
      'chat',
      ['rounds', '3'],
      ['serverCpus', '0-1'],
      ['quick', 'true'],
      ['quick', 'false'],
      ['quick', 'false'],
    ]);
  });

  it('notes --help and -h wherever they stand', () => {
    expect(readFlags(['--rounds', '1', '-h'], DEFS).help).toBe(true);
    expect(readFlags(['--help'], DEFS).help).toBe(true);
  });

  it('rejects an unknown flag, --no- on a flag that takes a value, and a missing value, with their codes', () => {
    expect(() => readFlags(['--round', '3'], DEFS)).toThrow(
      expect.objectContaining({
        code: LoadtestErrors.UNKNOWN_OPTION,
        message: 'unknown option --round; did you mean --rounds?',
      }),
    );
    // Nothing close: no guess.
    expect(() => readFlags(['--zzzzzz', '3'], DEFS)).toThrow(
      expect.objectContaining({ message: 'unknown option --zzzzzz' }),
    );
    expect(() => readFlags(['--no-rounds'], DEFS)).toThrow(
      expect.objectContaining({ code: LoadtestErrors.UNKNOWN_OPTION }),
    );
    expect(() => readFlags(['--rounds'], DEFS)).toThrow(
      expect.objectContaining({ code: LoadtestErrors.INVALID_OPTION, message: '--rounds needs a value' }),
    );
  });
});
