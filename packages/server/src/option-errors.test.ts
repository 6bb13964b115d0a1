import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BayouConfigError } from './errors.js';
import { invalidOption, optionProblem, rejectUnknownKeys, unknownOptions } from './option-errors.js';

const src = fileURLToPath(new URL('.', import.meta.url));

describe('option errors', () => {
  it('refuse an option with a BayouConfigError and its code', () => {
    expect(() => invalidOption('timeout', 'a number')).toThrow(
      expect.objectContaining({
        code: 'BAYOU_ERR_INVALID_OPTION',
        message: 'option "timeout" must be a number',
      }),
    );
    expect(() => optionProblem('x')).toThrow(BayouConfigError);
    expect(() => unknownOptions('unknown y')).toThrow(
      expect.objectContaining({ code: 'BAYOU_ERR_UNKNOWN_OPTION' }),
    );
    expect(() => rejectUnknownKeys({ timout: 1 }, ['timeout'])).toThrow('timout (did you mean timeout?)');
  });

  it('are the only place an option error is made: no resolver builds its own', () => {
    // Each construction with the line after it: the code may be on either.
    const own = execFileSync('git', ['grep', '-n', '-A1', '-e', 'new BayouConfigError(', '--', '.'], {
      cwd: src,
      encoding: 'utf8',
    })
      .split('\n--\n')
      .filter((hunk) => /BAYOU_ERR_(INVALID|UNKNOWN)_OPTION'/.test(hunk))
      .filter((hunk) => !hunk.startsWith('option-errors.ts') && !/^[^:]*\.test\.ts/.test(hunk));
    expect(own).toEqual([]);
  });
});
