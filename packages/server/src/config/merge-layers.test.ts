import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAGS, type FlagSpec, setPath } from './flags.js';
import { mergeLayers } from './merge-layers.js';
import { resolveCli } from './resolve-config.js';

const dir = mkdtempSync(join(tmpdir(), 'bayou-merge-'));
let files = 0;

type Source = 'flag' | 'env' | 'file';
const SOURCES: Source[] = ['flag', 'env', 'file'];

/** A valid value of a flag, told apart by the source that sets it. */
function sample(spec: FlagSpec, source: Source): { raw: string; value: unknown } {
  if (spec.kind === 'bool') return { raw: 'true', value: true };
  if (spec.kind === 'int') {
    const n = { flag: 7, env: 8, file: 9 }[source];
    return { raw: String(n), value: n };
  }
  const text = spec.flag.endsWith('-url')
    ? `https://${source}.example/${spec.flag}`
    : `${source}-${spec.flag}-${'x'.repeat(32)}`;
  return { raw: text, value: text };
}

/** Resolves with each `[spec, source]` set by that source alone. */
async function resolveWith(sets: [FlagSpec, Source][]): Promise<Record<string, unknown>> {
  const argv = ['start'];
  const env: Record<string, string> = {};
  const file: Record<string, unknown> = {};
  for (const [spec, source] of sets) {
    const { raw, value } = sample(spec, source);
    if (source === 'flag') argv.push(`--${spec.flag}=${raw}`);
    else if (source === 'env') env[spec.env.find((e) => e.startsWith('BAYOU_')) as string] = raw;
    else setPath(file, spec.key as string, value);
  }
  if (Object.keys(file).length > 0) {
    const path = join(dir, `c${files++}.json`);
    writeFileSync(path, JSON.stringify(file));
    argv.push('--config', path);
  }
  return (await resolveCli(argv, env)).config as Record<string, unknown>;
}

const get = (config: Record<string, unknown>, key: string): unknown =>
  key
    .split('.')
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], config);

/** Every option group the flags set part of (`admin`, `tokens`, `tls`, `limits`, `proxy`…). */
const groups = new Map<string, FlagSpec[]>();
for (const spec of FLAGS) {
  if (spec.key === null || !spec.key.includes('.')) continue;
  const group = spec.key.split('.')[0] as string;
  groups.set(group, [...(groups.get(group) ?? []), spec]);
}
// A secret and a JWKS URL are two kinds of key: the higher one replaces the other (tested below).
const exclusive = (a: FlagSpec, b: FlagSpec) =>
  new Set([a.key, b.key]).size === 2 &&
  [a.key, b.key].every((k) => k === 'tokens.secret' || k === 'tokens.jwksUrl');
const pairs = [...groups.entries()].flatMap(([group, specs]) => {
  const [a, b] = specs.filter((s, i) => i === 0 || !exclusive(specs[0] as FlagSpec, s));
  return b === undefined ? [] : [{ group, a: a as FlagSpec, b }];
});
const combos = SOURCES.flatMap((x) => SOURCES.filter((y) => y !== x).map((y) => [x, y] as const));

describe('option groups merge key by key across flags, environment and file', () => {
  it('covers every group that has two flags, the console among them', () => {
    expect(pairs.map((p) => p.group)).toEqual(
      expect.arrayContaining(['admin', 'tokens', 'tls', 'limits', 'webhooks', 'proxy']),
    );
  });

  describe.each(pairs)('$group: --$a.flag and --$b.flag', ({ a, b }) => {
    it.each(combos)('%s sets one, %s the other: both are kept', async (x, y) => {
      const config = await resolveWith([
        [a, x],
        [b, y],
      ]);
      expect(get(config, a.key as string)).toEqual(sample(a, x).value);
      expect(get(config, b.key as string)).toEqual(sample(b, y).value);
    });

    it('the first source that sets a key wins it: flag, then environment, then file', async () => {
      const all = await resolveWith(SOURCES.map((s) => [a, s]));
      expect(get(all, a.key as string)).toEqual(sample(a, 'flag').value);
      const lower = await resolveWith([
        [a, 'env'],
        [a, 'file'],
        [b, 'file'],
      ]);
      expect(get(lower, a.key as string)).toEqual(sample(a, 'env').value);
      expect(get(lower, b.key as string)).toEqual(sample(b, 'file').value);
    });
  });

  // Every key of every group, not only the first two: key i from source (i + shift) mod 3.
  const everyKey = [...groups.entries()]
    .map(([group, specs]) => ({
      group,
      specs: specs.filter((s) => s.key !== 'tokens.jwksUrl'),
    }))
    .filter(({ specs }) => specs.length >= 2);
  it.each(everyKey)('$group: every key kept, whichever source sets it', async ({ specs }) => {
    for (const shift of [0, 1, 2]) {
      const sets = specs.map((s, i) => [s, SOURCES[(i + shift) % 3] as Source] as [FlagSpec, Source]);
      const config = await resolveWith(sets);
      for (const [spec, source] of sets)
        expect(get(config, spec.key as string), `${spec.key} from ${source}`).toEqual(
          sample(spec, source).value,
        );
    }
  });

  it('keeps the password from the environment when --admin, BAYOU_ADMIN or the file turns the console on', async () => {
    const env = { BAYOU_ADMIN_PASSWORD: 'a long passphrase' };
    const adminFile = join(dir, 'admin.json');
    writeFileSync(adminFile, JSON.stringify({ admin: { enabled: true } }));
    for (const [argv, extra] of [
      [['start', '--admin'], {}],
      [['start'], { BAYOU_ADMIN: '1' }],
      [['start', '--config', adminFile], {}],
    ] as const) {
      const { config } = await resolveCli(argv, { ...env, ...extra });
      expect(config.admin).toEqual({ enabled: true, password: 'a long passphrase' });
    }
    // Turned off by a higher source: the password stays, the console does not start.
    const off = await resolveCli(['start', '--config', adminFile, '--admin=false'], env);
    expect(off.config.admin).toEqual({ enabled: false, password: 'a long passphrase' });
  });
});

describe('mergeLayers', () => {
  it('merges nested groups at every depth and takes arrays, functions and instances whole', () => {
    const hook = () => true;
    const buf = Buffer.from('k');
    const merged = mergeLayers(
      {
        proxy: { connect: { url: 'http://low/c', headers: { a: '1' } }, subscribe: 'http://low/s' },
        allowedOrigins: ['https://a.example'],
        https: { key: buf, cert: buf },
        canPublish: hook,
      },
      {
        proxy: { connect: { headers: { b: '2' } }, subscribe: { timeout: 50 } },
        allowedOrigins: ['https://b.example'],
        canPublish: undefined,
      },
    );
    expect(merged).toEqual({
      proxy: {
        connect: { url: 'http://low/c', headers: { a: '1', b: '2' } },
        subscribe: { url: 'http://low/s', timeout: 50 },
      },
      allowedOrigins: ['https://b.example'],
      https: { key: buf, cert: buf },
      canPublish: hook,
    });
  });

  it('lets --demo-feed turn on the file options, and false turn them off', () => {
    const file = { demoFeed: { symbols: 50, rate: 2 } };
    expect(mergeLayers(file, { demoFeed: true })).toEqual(file);
    expect(mergeLayers(file, { demoFeed: false })).toEqual({ demoFeed: false });
  });

  it('lets a higher token secret replace a lower JWKS URL, also inside the file auth object', () => {
    expect(
      mergeLayers(
        { tokens: { jwksUrl: 'https://k/x', issuer: 'i' } },
        { tokens: { secret: 's'.repeat(32) } },
      ),
    ).toEqual({ tokens: { secret: 's'.repeat(32), issuer: 'i' } });
    expect(
      mergeLayers(
        { auth: { tokens: { secret: 's'.repeat(32), issuer: 'i' } } },
        { auth: { tokens: { jwksUrl: 'https://k/x' } } },
      ),
    ).toEqual({ auth: { tokens: { jwksUrl: 'https://k/x', issuer: 'i' } } });
  });
});
