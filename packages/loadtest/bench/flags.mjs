// @ts-check
// The bench scripts' flags: each script names its flags by a defaults object (the type of a
// default is the type of its flag) and the sizes `--quick` shrinks to; the command line is
// read by the load tester's own flag reader (src/flag-reader.ts), so `--flag value`,
// `--flag=value` and `--no-flag` work here as in `bayou-loadtest`. `--help` prints every flag
// with its default and exits; a bad flag prints what is wrong and exits 2.
import { LoadtestError, LoadtestErrors } from '../dist/errors.js';
import { kebabFlag, readFlags } from '../dist/flag-reader.js';

/** @typedef {Record<string, string | number | boolean>} FlagDefaults */

/**
 * The flags of `argv` over `defaults`, with `quick`'s sizes in place of every default the
 * command line did not set when `--quick` is on. Throws a LoadtestError on a bad flag.
 * @template {FlagDefaults} T
 * @param {readonly string[]} argv
 * @param {T} defaults
 * @param {Partial<T>} [quick]
 * @returns {{ flags: T, help: boolean, given: Set<keyof T> }}
 */
export function parseBenchFlags(argv, defaults, quick = {}) {
  /** @type {Array<keyof T & string>} */
  const keys = Object.keys(defaults);
  const defs = keys.map((key) => ({
    key,
    flag: kebabFlag(key),
    isSwitch: typeof defaults[key] === 'boolean',
  }));
  const { tokens, help } = readFlags(argv, defs);
  /** @type {Record<string, string | number | boolean>} */
  const values = { ...defaults };
  /** @type {Set<keyof T>} */
  const given = new Set();
  for (const token of tokens) {
    if (token.kind === 'positional')
      throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `unexpected argument ${token.value}`);
    const { key, flag } = token.def;
    values[key] = convert(flag, defaults[key], token.raw);
    given.add(key);
  }
  if (values.quick === true) {
    for (const [key, value] of Object.entries(quick))
      if (!given.has(key) && value !== undefined) values[key] = value;
  }
  return { flags: /** @type {T} */ (values), help, given };
}

/**
 * @param {string} flag
 * @param {string | number | boolean | undefined} fallback the default, whose type the value takes
 * @param {string} raw
 */
function convert(flag, fallback, raw) {
  if (typeof fallback === 'boolean') {
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--${flag} is a switch (--${flag} or --no-${flag}), got ${raw}`,
    );
  }
  if (typeof fallback === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) {
      throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `--${flag} needs a number, got ${raw}`);
    }
    return n;
  }
  return raw;
}

/**
 * `usage: <command> [--flag default]…`, every flag with its default.
 * @param {string} command
 * @param {FlagDefaults} defaults
 */
export function benchUsage(command, defaults) {
  const list = Object.entries(defaults).map(([k, v]) =>
    typeof v === 'boolean' ? `[--${kebabFlag(k)}]` : `[--${kebabFlag(k)} ${v === '' ? "''" : v}]`,
  );
  return `usage: ${command} ${list.join(' ')}`;
}

/**
 * The bench script's flags, or (after printing) an exit: 0 for `--help`, 2 for a bad flag.
 * @template {FlagDefaults} T
 * @param {string} command how the script is run, for `--help`
 * @param {T} defaults
 * @param {Partial<T>} [quick]
 * @returns {T}
 */
export function benchFlags(command, defaults, quick = {}) {
  try {
    const { flags, help } = parseBenchFlags(process.argv.slice(2), defaults, quick);
    if (help) {
      console.log(benchUsage(command, defaults));
      process.exit(0);
    }
    return flags;
  } catch (error) {
    if (!(error instanceof LoadtestError)) throw error;
    console.error(`${command}: ${error.message} (--help lists the flags)`);
    process.exit(2);
  }
}
