/**
 * The source facts Biome enforces (CONTRIBUTING.md): no import cycle, no source file over
 * 400 lines, no function over 80, no '/meta/' or Bayou ext-key literal outside
 * `@bayou/protocol`. `npm test` runs `biome check .` on the repository; this runs the
 * repository's own `biome.json` and lint plugins on small fixtures, so a rule switched off,
 * scoped wrongly or silently broken by a Biome upgrade fails here. A second part writes a
 * rule-breaking fixture at the path of every real source file and requires an error there,
 * so any loosening — an allowance for one file, a raised limit, a `warn` level, a narrowed
 * `includes`, type imports left out of the cycle rule — fails too; every other rule is read
 * from the configuration (no `warn`, no `off` beyond the listed ones, linter and preset on).
 * Each of those is proven caught on a loosened copy of biome.json.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const biome = join(root, 'node_modules/.bin/biome');

const LITERALS = `export const connect = '/meta/connect';
export function acked(m: { ext?: Record<string, unknown> }): unknown {
  return m.ext?.ack;
}
`;
const longFunction = (lines: number) =>
  `export function long(): number {\n  let n = 0;\n${Array.from({ length: lines }, (_, i) => `  n += ${i};\n`).join('')}  return n;\n}\n`;
const bigFile = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `export const v${i} = ${i};\n`).join('');

const FIXTURES: Record<string, string> = {
  'packages/a/src/literals.ts': LITERALS,
  'packages/protocol/src/literals.ts': LITERALS,
  'packages/a/src/literals.test.ts': LITERALS,
  'packages/a/src/long.ts': longFunction(80),
  'packages/a/src/short.ts': longFunction(70),
  'packages/a/src/long.test.ts': longFunction(80),
  'packages/a/src/big.ts': bigFile(401),
  'packages/a/src/fits.ts': bigFile(399),
  'packages/a/src/cycle-one.ts':
    "import { two } from './cycle-two.js';\nexport const one = (): number => two() + 1;\n",
  'packages/a/src/cycle-two.ts':
    "import { one } from './cycle-one.js';\nexport const two = (): number => one() - 1;\n",
};

let dir = '';
/** Diagnostic categories by fixture path. */
let found = new Map<string, string[]>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bayou-source-checks-'));
  cpSync(join(root, 'biome.json'), join(dir, 'biome.json'));
  cpSync(join(root, 'lint'), join(dir, 'lint'), { recursive: true });
  for (const [path, text] of Object.entries(FIXTURES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  let out: string;
  try {
    out = execFileSync(biome, ['lint', '--reporter=json', '--max-diagnostics=100', '.'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (err) {
    // Biome exits 1 when it reports errors, as it must here.
    out = (err as { stdout: string }).stdout;
  }
  const report = JSON.parse(out) as { diagnostics: { category: string; location: { path: unknown } }[] };
  found = new Map();
  for (const d of report.diagnostics) {
    const p = d.location.path;
    const path = typeof p === 'string' ? p : (p as { file: string }).file;
    found.set(path, [...(found.get(path) ?? []), d.category]);
  }
}, 60_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const at = (path: string): string[] => found.get(path) ?? [];

describe("the repository's Biome configuration", () => {
  it("fails on a '/meta/' literal and an ext-key literal in src, not in packages/protocol nor in tests", () => {
    expect(at('packages/a/src/literals.ts').filter((c) => c === 'plugin')).toHaveLength(2);
    expect(at('packages/protocol/src/literals.ts')).toEqual([]);
    expect(at('packages/a/src/literals.test.ts')).toEqual([]);
  });

  it('fails on a src function over 80 lines, not on one of 70 nor in a test file', () => {
    expect(at('packages/a/src/long.ts')).toContain('lint/complexity/noExcessiveLinesPerFunction');
    expect(at('packages/a/src/short.ts')).toEqual([]);
    expect(at('packages/a/src/long.test.ts')).toEqual([]);
  });

  it('fails on a src file over 400 lines, not on one of 399', () => {
    expect(at('packages/a/src/big.ts')).toContain('lint/style/noExcessiveLinesPerFile');
    expect(at('packages/a/src/fits.ts')).toEqual([]);
  });

  it('fails on an import cycle', () => {
    const cycle = [...at('packages/a/src/cycle-one.ts'), ...at('packages/a/src/cycle-two.ts')];
    expect(cycle).toContain('lint/suspicious/noImportCycles');
  });

  it('holds at full strength on every source file there is: no allowance, no warn level, no narrowed scope', () => {
    expect(loosenings(readFileSync(join(root, 'biome.json'), 'utf8'))).toEqual([]);
  });

  it('switches no other rule off or to a warning, and keeps the linter and its preset on', () => {
    expect(weakenedRules(readFileSync(join(root, 'biome.json'), 'utf8'))).toEqual([]);
  });
});

/** Rules the repository switches off on purpose (CONTRIBUTING.md); adding one is a reviewed change here. */
const ALLOWED_OFF = ['complexity.noForEach', 'style.noNonNullAssertion', 'style.useTemplate'];

type RuleGroups = Record<string, Record<string, string | { level?: string }>>;
interface LinterPart {
  enabled?: boolean;
  rules?: RuleGroups & { preset?: string; recommended?: boolean };
}

/**
 * Every rule of every rule set (the root's and each override's) that is weaker than an
 * error: a `warn` or `info` level anywhere, an `off` other than the allowed ones at the
 * root (none in an override), a linter disabled, the recommended preset dropped.
 */
function weakenedRules(config: string): string[] {
  const c = JSON.parse(config) as { linter?: LinterPart; overrides?: { linter?: LinterPart }[] };
  const weak: string[] = [];
  if (c.linter?.enabled === false) weak.push('linter disabled');
  if (c.linter?.rules?.preset !== 'recommended') weak.push('preset not recommended');
  const sets: [string, LinterPart | undefined][] = [
    ['root', c.linter],
    ...(c.overrides ?? []).map((o, i): [string, LinterPart | undefined] => [`overrides[${i}]`, o.linter]),
  ];
  for (const [where, linter] of sets) {
    if (where !== 'root' && linter?.enabled === false) weak.push(`${where}: linter disabled`);
    if (linter?.rules?.recommended === false) weak.push(`${where}: recommended false`);
    for (const [group, rules] of Object.entries(linter?.rules ?? {})) {
      if (typeof rules !== 'object' || rules === null) continue;
      for (const [rule, setting] of Object.entries(rules)) {
        const level = typeof setting === 'string' ? setting : setting.level;
        const name = `${group}.${rule}`;
        if (level === 'warn' || level === 'info') weak.push(`${where}: ${name} ${level}`);
        if (level === 'off' && !(where === 'root' && ALLOWED_OFF.includes(name)))
          weak.push(`${where}: ${name} off`);
      }
    }
  }
  return weak;
}

/**
 * Where the repository's rules are weaker than they must be. Each source file's path (every
 * src file of every package and example, tests excepted) gets a fixture that breaks the size
 * rules (401 lines, an 84-line function) and closes an import cycle of type imports with a
 * partner file beside it, and in a second run one with a '/meta/' and an
 * ext-key literal (outside packages/protocol); each must be reported there as an error. A
 * raised limit, a `warn` level, an override for one file or a narrowed `includes` show up as
 * a missing error. (Two runs: the literal plugins are slow on 400-line files.)
 */
function loosenings(config: string, checks: { sizes?: boolean; literals?: boolean } = {}): string[] {
  const sources = execFileSync('git', ['ls-files', 'packages/*/src/**', 'examples/*/src/**'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => /\.(ts|tsx)$/.test(f) && !/\.test\.tsx?$/.test(f));
  const missing: string[] = [];
  if (checks.sizes !== false) {
    // 2 + 315 + 84 lines: one over the file limit, with one function over its limit, and a
    // type-only import of a partner file that imports it back (a cycle, types included).
    const partners = new Map(sources.map((path) => [partnerOf(path), cyclePartner(path)]));
    const errors = lintAt(
      config,
      sources,
      (path) => `${cycleTo(path)}${bigFile(315)}${longFunction(80)}`,
      false,
      partners,
    );
    for (const path of sources)
      for (const rule of [
        'lint/style/noExcessiveLinesPerFile',
        'lint/complexity/noExcessiveLinesPerFunction',
        'lint/suspicious/noImportCycles',
      ])
        if (!(errors.get(path) ?? []).includes(rule)) missing.push(`${path}: ${rule}`);
  }
  if (checks.literals !== false) {
    const errors = lintAt(config, sources, LITERALS, true);
    for (const path of sources) {
      const plugins = (errors.get(path) ?? []).filter((c) => c === 'plugin').length;
      if (!path.startsWith('packages/protocol/') && plugins < 2) missing.push(`${path}: literal plugins`);
    }
  }
  return missing;
}

const baseOf = (path: string): string => (path.split('/').at(-1) as string).replace(/\.tsx?$/, '');
/** The file a source path's fixture imports, and which imports it back. */
const partnerOf = (path: string): string => path.replace(/\.tsx?$/, '.cycle-partner.ts');
const cycleTo = (path: string): string =>
  `import type { Partner } from './${baseOf(path)}.cycle-partner.js';\nexport type Self = { partner?: Partner };\n`;
const cyclePartner = (path: string): string =>
  `import type { Self } from './${baseOf(path)}.js';\nexport type Partner = { self?: Self };\n`;

/**
 * Lints `text` (or the text for each path) written at each of `paths`, beside the `extra`
 * files, under `config`: the error categories by path.
 */
function lintAt(
  config: string,
  paths: string[],
  text: string | ((path: string) => string),
  plugins: boolean,
  extra: ReadonlyMap<string, string> = new Map(),
): Map<string, string[]> {
  const work = mkdtempSync(join(tmpdir(), 'bayou-source-guard-'));
  try {
    const parsed = JSON.parse(config) as { overrides?: { plugins?: string[] }[] };
    // The size run leaves the (slow) literal plugins out; the literal run keeps everything.
    if (!plugins) for (const o of parsed.overrides ?? []) delete o.plugins;
    writeFileSync(join(work, 'biome.json'), JSON.stringify(parsed));
    cpSync(join(root, 'lint'), join(work, 'lint'), { recursive: true });
    for (const path of paths) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), typeof text === 'string' ? text : text(path));
    }
    for (const [path, body] of extra) writeFileSync(join(work, path), body);
    const errors = new Map<string, string[]>();
    for (const d of lint(work)) {
      if (d.severity !== 'error') continue;
      errors.set(d.path, [...(errors.get(d.path) ?? []), d.category]);
    }
    return errors;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function lint(cwd: string): { path: string; category: string; severity: string }[] {
  let out: string;
  try {
    out = execFileSync(biome, ['lint', '--reporter=json', '--max-diagnostics=none', '.'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  const report = JSON.parse(out) as {
    diagnostics: { category: string; severity: string; location: { path: unknown } }[];
  };
  return report.diagnostics.map((d) => {
    const p = d.location.path;
    return {
      path: typeof p === 'string' ? p : (p as { file: string }).file,
      category: d.category,
      severity: d.severity,
    };
  });
}

describe('the source guard itself', () => {
  const real = () => JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as BiomeConfig;
  type Rules = Record<string, Record<string, { level: string; options?: { maxLines?: number } }>>;
  type BiomeConfig = { overrides: { includes: string[]; linter?: { rules?: Rules }; plugins?: string[] }[] };
  const sizeRules = (c: BiomeConfig) => c.overrides[0]?.linter?.rules as Rules;

  it('catches a raised limit', () => {
    const c = real();
    (sizeRules(c).style!.noExcessiveLinesPerFile as { options: { maxLines: number } }).options.maxLines = 401;
    expect(
      loosenings(JSON.stringify(c), { literals: false }).some((m) => m.endsWith('noExcessiveLinesPerFile')),
    ).toBe(true);
  });

  it('catches a rule turned to a warning', () => {
    const c = real();
    (sizeRules(c).complexity!.noExcessiveLinesPerFunction as { level: string }).level = 'warn';
    expect(
      loosenings(JSON.stringify(c), { literals: false }).some((m) =>
        m.endsWith('noExcessiveLinesPerFunction'),
      ),
    ).toBe(true);
  });

  it('catches an import-cycle rule that ignores type imports', () => {
    const c = real() as BiomeConfig & { linter: { rules: Rules } };
    (
      c.linter.rules.suspicious!.noImportCycles as unknown as { options: { ignoreTypes: boolean } }
    ).options.ignoreTypes = true;
    const missing = loosenings(JSON.stringify(c), { literals: false });
    expect(missing).toContain('packages/server/src/kernel/connects.ts: lint/suspicious/noImportCycles');
  });

  it('catches the import-cycle rule switched off for one file', () => {
    const c = real();
    c.overrides.push({
      includes: ['packages/server/src/bayeux/extensions.ts'],
      linter: { rules: { suspicious: { noImportCycles: { level: 'off' } } } },
    });
    const missing = loosenings(JSON.stringify(c), { literals: false });
    expect(missing).toEqual(['packages/server/src/bayeux/extensions.ts: lint/suspicious/noImportCycles']);
  });

  it('catches any other rule switched off or to a warning, and a linter or preset turned off', () => {
    const loosen = (edit: (c: BiomeConfig & { linter: LinterPart }) => void): string[] => {
      const c = real() as BiomeConfig & { linter: LinterPart };
      edit(c);
      return weakenedRules(JSON.stringify(c));
    };
    expect(
      loosen((c) => {
        (c.linter.rules as RuleGroups).suspicious!.noExplicitAny = 'warn';
      }),
    ).toEqual(['root: suspicious.noExplicitAny warn']);
    expect(
      loosen((c) => {
        (c.linter.rules as RuleGroups).correctness = { noUnusedVariables: 'off' };
      }),
    ).toEqual(['root: correctness.noUnusedVariables off']);
    expect(
      loosen((c) => {
        c.overrides.push({
          includes: ['packages/server/**'],
          linter: { rules: { style: { useTemplate: 'off' } } },
        } as unknown as BiomeConfig['overrides'][number]);
      }),
    ).toEqual(['overrides[2]: style.useTemplate off']);
    expect(
      loosen((c) => {
        c.overrides.push({
          includes: ['examples/**'],
          linter: { enabled: false },
        } as BiomeConfig['overrides'][number]);
      }),
    ).toEqual(['overrides[2]: linter disabled']);
    expect(
      loosen((c) => {
        delete (c.linter.rules as { preset?: string }).preset;
      }),
    ).toEqual(['preset not recommended']);
  });

  it('catches an allowance for one file and a narrowed scope', () => {
    const c = real();
    c.overrides.push({
      includes: ['packages/server/src/kernel/connects.ts'],
      linter: { rules: { style: { noExcessiveLinesPerFile: { level: 'off' } } } },
    });
    (c.overrides[1] as { includes: string[] }).includes.push('!examples/**');
    const missing = loosenings(JSON.stringify(c));
    expect(missing).toContain('packages/server/src/kernel/connects.ts: lint/style/noExcessiveLinesPerFile');
    expect(missing.some((m) => m.startsWith('examples/') && m.endsWith('literal plugins'))).toBe(true);
  });
});
