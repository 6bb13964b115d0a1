import { expected, inRange, NUMBER_RANGES } from '../defaults.js';

/** The shape of one row of the flag table (`flags.ts`, `limit-flags.ts`) and its value checks. */
export type FlagKind = 'string' | 'int' | 'number' | 'bool' | 'list';

export interface FlagSpec {
  /** Without the leading `--`. */
  flag: string;
  /** Environment variables, first one wins. */
  env: string[];
  /** Dotted config key (`tokens.secret`); `null` for `--config` itself. */
  key: string | null;
  kind: FlagKind;
  /** Shown in `--help`: a placeholder for the value. */
  value?: string;
  help: string;
  /** As documented. */
  default: string;
  /** Accepted values or range, checked when parsed. */
  check?: (value: unknown) => string | null;
  /** A secret: never echoed in errors. */
  secret?: boolean;
  /** For `string` flags: turns the text into the value (checked by `check`, then the option). */
  parse?: (raw: string) => unknown;
}

/** A default as the flag table shows it: a list comma-separated, like the flag's own value. */
export const shown = (value: string | number | boolean | readonly string[]): string =>
  Array.isArray(value) ? (value.length === 0 ? 'none' : value.join(',')) : String(value);

export const portCheck = (v: unknown) =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535 ? null : 'must be 0-65535';
export const positive = (v: unknown) => ((v as number) > 0 ? null : 'must be a positive number');
export const nonNegative = (v: unknown) => ((v as number) >= 0 ? null : 'must be 0 or more');
export const oneOf =
  (...values: string[]) =>
  (v: unknown) =>
    values.includes(v as string) ? null : `must be one of ${values.join(', ')}`;

/** A flag that sets a number option of the plugin gets that option's range as its check. */
export function checkedAsOption(spec: FlagSpec): FlagSpec {
  if (spec.key === null || !Object.hasOwn(NUMBER_RANGES, spec.key)) return spec;
  const range = NUMBER_RANGES[spec.key as keyof typeof NUMBER_RANGES];
  return { ...spec, check: (v) => (inRange(range, v) ? null : `must be ${expected(range)}`) };
}
