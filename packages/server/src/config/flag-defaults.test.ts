import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REDIS_ENGINE_DEFAULTS } from '../engine/redis/redis-options.js';
import { defaultLimits } from '../limits/limiter.js';
import { defaultOptions } from '../options.js';
import { DEFAULT_PROXY_TIMEOUT } from '../proxy/proxy-options.js';
import { DEMO_FEED_DEFAULTS } from '../records/demo-feed.js';
import { STANDALONE_DEFAULTS } from '../server-defaults.js';
import { shown } from './flag-spec.js';
import { FLAGS } from './flags.js';

type Shown = Parameters<typeof shown>[0];

/** The value a flag's config key takes when nothing sets it, read from the one place it is defined. */
function definedDefault(key: string): Shown | undefined {
  const record = (o: object, k: string) => (o as Record<string, Shown | undefined>)[k];
  if (key in defaultOptions) return record(defaultOptions, key);
  if (key.startsWith('limits.')) return record(defaultLimits, key.slice('limits.'.length));
  if (key in STANDALONE_DEFAULTS) return record(STANDALONE_DEFAULTS, key);
  if (key === 'redisEngine.keyPrefix') return REDIS_ENGINE_DEFAULTS.keyPrefix;
  if (key === 'proxy.timeout') return DEFAULT_PROXY_TIMEOUT;
  if (key === 'demoSymbols') return DEMO_FEED_DEFAULTS.symbols;
  if (key === 'demoRate') return DEMO_FEED_DEFAULTS.rate;
  return undefined;
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
    expect(host?.default).toContain(STANDALONE_DEFAULTS.openHost);
    expect(host?.default).toContain(STANDALONE_DEFAULTS.host);
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
