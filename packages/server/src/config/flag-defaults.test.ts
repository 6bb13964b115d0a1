import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NUMBER_RANGES, SERVER_DEFAULTS } from '../defaults.js';
import { defaultOptions, resolveOptions } from '../options.js';
import { shown } from './flag-spec.js';
import { FLAGS, parseFlags, usage } from './flags.js';

type Shown = Parameters<typeof shown>[0];

/** The group of `SERVER_DEFAULTS` a config key's default is in, and its name there. */
function place(key: string): [object, string] {
  const [head = '', rest] = key.split('.', 2) as [string, string | undefined];
  if (rest !== undefined && head in SERVER_DEFAULTS)
    return [SERVER_DEFAULTS[head as keyof typeof SERVER_DEFAULTS], rest];
  if (key in SERVER_DEFAULTS.plugin) return [SERVER_DEFAULTS.plugin, key];
  if (key.startsWith('demo')) return [SERVER_DEFAULTS.demoFeed, key.slice(4).toLowerCase()];
  return [SERVER_DEFAULTS.standalone, key];
}

/** The value a flag's config key takes when nothing sets it, read from the one definition. */
function definedDefault(key: string): Shown | undefined {
  // The one default that is the machine's: 90% of its open-file limit.
  if (key === 'maxConnections') return defaultOptions.maxConnections;
  const [group, name] = place(key);
  return (group as Record<string, Shown | undefined>)[name];
}

/** Flags whose option is off or unset unless given: no value to tie, the table says so. */
const UNSET = new Set([
  'tokens.secret',
  'tokens.jwksUrl',
  'tokens.issuer',
  'tokens.audience',
  'allowAnonymous',
  'apiKey',
  'tls.key',
  'tls.cert',
  'http2',
  'trustProxy',
  'proxy.connect.url',
  'proxy.subscribe.url',
  'proxy.publish.url',
  'proxy.rpc.url',
  'webhooks.url',
  'webhooks.secret',
  'admin.enabled',
  'admin.password',
  'redis',
  'demoFeed',
]);

describe('the flag table', () => {
  const optionFlags = FLAGS.filter((f) => f.key !== null && f.key !== 'host');

  it.each(optionFlags.filter((f) => !UNSET.has(f.key as string)))(
    '--$flag documents the default its option has',
    (spec) => {
      const value = definedDefault(spec.key as string);
      expect(value, `no default defined for ${spec.key}: tie it or list it as unset`).not.toBeUndefined();
      // A note may follow the value (`1 (one process)`), never replace it.
      const text = shown(value as Shown);
      expect(spec.default === text || spec.default.startsWith(`${text} (`)).toBe(true);
    },
  );

  it.each(optionFlags.filter((f) => UNSET.has(f.key as string)))('--$flag is documented as unset', (spec) => {
    expect(definedDefault(spec.key as string)).toBeUndefined();
    expect(spec.default).toMatch(/^(none|not checked|false)\b/);
  });

  it('--host names both interfaces bayou start picks from', () => {
    const host = FLAGS.find((f) => f.flag === 'host');
    expect(host?.default).toContain(SERVER_DEFAULTS.standalone.openHost);
    expect(host?.default).toContain(SERVER_DEFAULTS.standalone.host);
  });

  it("agrees with the README: each flag's default is the one its configuration table shows", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    let checked = 0;
    for (const row of readme.split('\n').filter((l) => l.startsWith('| `--'))) {
      const [, flags = '', , cell = ''] = row.split('|');
      const names = [...flags.matchAll(/`--([a-z0-9-]+)/g)].map((m) => m[1] as string);
      const shownInReadme = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
      for (const name of names) {
        const spec = FLAGS.find((f) => f.flag === name);
        expect(spec, `README row for unknown flag --${name}`).toBeDefined();
        // A value, optionally followed by a note; text defaults ('none', 'not checked') and
        // the machine-dependent connection cap are prose on both sides.
        const value = spec?.default.split(' (')[0] as string;
        if (name === 'host' || name === 'max-connections' || /^(none|not checked)/.test(value)) continue;
        expect(shownInReadme, `--${name}`).toContain(value);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(35);
  });

  it('every flag with an option is either tied to a defined default or listed as unset', () => {
    const loose = optionFlags.filter(
      (f) => !UNSET.has(f.key as string) && definedDefault(f.key as string) === undefined,
    );
    expect(loose.map((f) => f.flag)).toEqual([]);
  });
});

describe('option errors in one definition', () => {
  const numberFlags = FLAGS.filter((f) => f.key !== null && Object.hasOwn(NUMBER_RANGES, f.key));

  it('covers every number option that has a flag', () => {
    expect(numberFlags.length).toBeGreaterThan(20);
  });

  // Around each range's bound, and the values an operator tries first.
  it.each(numberFlags)('--$flag refuses exactly what the option refuses', (spec) => {
    const key = spec.key as keyof typeof NUMBER_RANGES;
    const { min } = NUMBER_RANGES[key];
    for (const n of new Set([0, 1, Math.max(0, min - 1), min, min + 1, 4096, 60_000])) {
      let optionError: string | null = null;
      try {
        resolveOptions({ [key]: n });
      } catch (err) {
        optionError = (err as Error).message;
      }
      const flag = (): unknown => parseFlags([`--${spec.flag}`, String(n)]);
      if (optionError === null) expect(flag, `--${spec.flag} ${n}`).not.toThrow();
      else {
        // The same words: `option "streamMaxBytes" must be at least 4096 (bytes)`.
        const words = optionError.split(' must be ')[1] as string;
        expect(flag, `--${spec.flag} ${n}`).toThrow(`--${spec.flag} must be ${words}, got "${n}"`);
      }
    }
  });
});

describe('--help and the README table, against the flag table', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| `--'));
  const help = usage();

  it.each(FLAGS)('--$flag: its README row names it with its variables, --help with its default', (spec) => {
    const row = rows.find((r) => new RegExp(`\`--${spec.flag}[\` ]`).test(r.split('|')[1] as string));
    expect(row, `no row for --${spec.flag} in the README's configuration table`).toBeDefined();
    const [, , env = ''] = (row as string).split('|');
    for (const name of spec.env) expect(env, `--${spec.flag}`).toContain(`\`${name}\``);
    const at = help.indexOf(`  --${spec.flag}${spec.value === undefined ? '' : ` ${spec.value}`} `);
    expect(at, `--${spec.flag} in --help`).toBeGreaterThanOrEqual(0);
    const entry = help.slice(at, help.indexOf('\n  -', at + 1));
    expect(entry).toContain(`(default ${spec.default}; env ${spec.env.join(' or ')})`);
  });

  it('the README table names no variable its flag does not read', () => {
    for (const row of rows) {
      const [, flags = '', env = ''] = row.split('|');
      const names = [...flags.matchAll(/`--([a-z0-9-]+)/g)].map((m) => m[1]);
      const read = FLAGS.filter((f) => names.includes(f.flag)).flatMap((f) => f.env);
      for (const m of env.matchAll(/`([A-Z0-9_]+)`/g)) expect(read, row.slice(0, 60)).toContain(m[1]);
    }
  });
});

describe('the README options table, against the defaults', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  /** How the options table writes a value: `'/bayeux'`, `1000`, `false`, `[]`, `['a', 'b']`. */
  const written = (v: unknown): string =>
    typeof v === 'string'
      ? `'${v}'`
      : Array.isArray(v)
        ? `[${v.map((x) => `'${x}'`).join(', ')}]`
        : String(v);

  it.each(Object.entries(SERVER_DEFAULTS.plugin))('`%s` shows its default', (key, value) => {
    const row = readme.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    expect(row, `no row for ${key}`).toBeDefined();
    const cell = (row as string).split('|')[2] as string;
    if (key === 'trustClientSession' || key === 'healthPath' || key === 'readyPath') {
      // Defaults that depend on another option or on createServer: each value named.
      expect(cell).toContain(`\`${written(value)}\``);
      return;
    }
    expect(cell.trim().startsWith(`\`${written(value)}\``), `${key}: ${cell}`).toBe(true);
  });

  it('`limits` shows each limit with its default', () => {
    const row = readme.split('\n').find((l) => l.startsWith('| `limits` |')) as string;
    const cell = row.split('|')[2] as string;
    for (const [k, v] of Object.entries(SERVER_DEFAULTS.limits)) expect(cell).toContain(`${k}: ${v}`);
  });
});

describe('the other groups, where the READMEs show their defaults', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const cluster = readFileSync(new URL('../../../../docs/cluster.md', import.meta.url), 'utf8');
  const row = (text: string, key: string): string => {
    const found = text.split('\n').find((l) => l.startsWith(`| \`${key}\` |`));
    expect(found, `no row for ${key}`).toBeDefined();
    return found as string;
  };
  const cell = (text: string, key: string): string => row(text, key).split('|')[2] as string;

  it('webhooks, proxy and the demo feed: `key = value` in the README', () => {
    const webhooks = row(readme, 'webhooks');
    for (const [k, v] of Object.entries(SERVER_DEFAULTS.webhooks)) expect(webhooks).toContain(`${k} = ${v}`);
    expect(row(readme, 'proxy')).toContain(`timeout = ${SERVER_DEFAULTS.proxy.timeout}`);
    const { symbols, rate } = SERVER_DEFAULTS.demoFeed;
    expect(readme).toContain(`\`{ symbols = ${symbols}, rate = ${rate} }\``);
  });

  it("the Redis engine's: docs/cluster.md's engine options table", () => {
    for (const [k, v] of Object.entries(SERVER_DEFAULTS.redisEngine)) {
      if (v === null) continue;
      expect(cell(cluster, k).trim().startsWith(`\`${v}\``), `${k}: ${cell(cluster, k)}`).toBe(true);
    }
  });
});
