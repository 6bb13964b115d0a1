/**
 * The one command-line reader of the package: `bayou-loadtest`'s options (options.ts) and
 * the bench scripts (bench/flags.mjs) both split their argv here. It knows the forms
 * (`--flag value`, `--flag=value`, `--no-flag` for a switch, `--help`/`-h`) and which flags
 * exist; what a value means is the caller's to convert, so each keeps its own value kinds.
 */
import { closest } from '@bayou/protocol';
import { LoadtestError, LoadtestErrors } from './errors.js';

export interface FlagDef<K extends string = string> {
  /** The caller's name for it (an options key). */
  key: K;
  /** The flag without its dashes (`local-addresses`). */
  flag: string;
  /** A switch takes no value: `--flag` is true, `--no-flag` false, `--flag=false` too. */
  isSwitch: boolean;
}

/** One argument, in command-line order: a known flag with its raw value, or a positional. */
export type FlagToken<K extends string = string> =
  | { kind: 'flag'; def: FlagDef<K>; raw: string }
  | { kind: 'positional'; value: string };

export interface ReadFlags<K extends string = string> {
  tokens: FlagToken<K>[];
  help: boolean;
}

/** camelCase key → the kebab-case flag (`roomsPerClient` → `rooms-per-client`). */
export function kebabFlag(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Splits `argv` into flags of `defs` and positionals; throws a LoadtestError on an unknown flag or a missing value. */
export function readFlags<K extends string>(
  argv: readonly string[],
  defs: readonly FlagDef<K>[],
): ReadFlags<K> {
  const tokens: FlagToken<K>[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      tokens.push({ kind: 'positional', value: arg });
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const def = defs.find((d) => d.flag === name);
    const negated =
      def === undefined && name.startsWith('no-') ? defs.find((d) => d.flag === name.slice(3)) : undefined;
    if (negated?.isSwitch && inline === undefined) {
      tokens.push({ kind: 'flag', def: negated, raw: 'false' });
      continue;
    }
    if (def === undefined) {
      const near = closest(
        name,
        defs.map((d) => d.flag),
      );
      const hint = near === undefined ? '' : `; did you mean --${near}?`;
      throw new LoadtestError(LoadtestErrors.UNKNOWN_OPTION, `unknown option --${name}${hint}`);
    }
    const raw = def.isSwitch ? (inline ?? 'true') : (inline ?? argv[++i]);
    if (raw === undefined) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `--${name} needs a value`);
    tokens.push({ kind: 'flag', def, raw });
  }
  return { tokens, help };
}
