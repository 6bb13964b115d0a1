/**
 * The one way an option is refused: a `BayouConfigError` that names the option (dotted
 * for a nested one, `limits.publishRate`) and says what it must be. Every options resolver
 * of the package (`options.ts`, the Redis engine's, the webhooks', the proxy's, the
 * tokens', the plugin's) throws through these.
 */

import { closest } from '@bayou/protocol';
import { BayouConfigError } from './errors.js';

/** `option "<name>" must be <expected>`. */
export function invalidOption(name: string, expected: string): never {
  throw new BayouConfigError('BAYOU_ERR_INVALID_OPTION', `option "${name}" must be ${expected}`);
}

/** An invalid option (or combination) whose message does not fit `must be …`. */
export function optionProblem(message: string): never {
  throw new BayouConfigError('BAYOU_ERR_INVALID_OPTION', message);
}

/** Unknown options, said as `message` (`unknown Redis engine option(s): …`). */
export function unknownOptions(message: string): never {
  throw new BayouConfigError('BAYOU_ERR_UNKNOWN_OPTION', message);
}

/**
 * Throws for the keys of `input` not in `known`, each with the closest known key when it
 * looks like a typo (`timout (did you mean timeout?)`), as an unknown flag is told; `where`
 * names the object (`webhooks`, `history[2]`).
 */
export function rejectUnknownKeys(input: object, known: Iterable<string>, where?: string): void {
  const allowed = [...known];
  const unknown = Object.keys(input).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    const place = where === undefined ? '' : ` in ${where}`;
    const named = unknown.map((k) => {
      const near = closest(k, allowed);
      return near === undefined ? k : `${k} (did you mean ${near}?)`;
    });
    throw new BayouConfigError('BAYOU_ERR_UNKNOWN_OPTION', `unknown option(s)${place}: ${named.join(', ')}`);
  }
}

/**
 * `invalidOption` for the options of one object: `scopedInvalid('webhooks')('url', …)`
 * names `webhooks.url`; a name starting with `.` or `[` is appended as is, `''` names the
 * object itself.
 */
export function scopedInvalid(scope: string): (name: string, expected: string) => never {
  return (name, expected) => {
    const sep = name === '' || name.startsWith('.') || name.startsWith('[') ? '' : '.';
    return invalidOption(`${scope}${sep}${name}`, expected);
  };
}
