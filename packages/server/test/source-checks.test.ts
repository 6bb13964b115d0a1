/**
 * The source facts Biome enforces (CONTRIBUTING.md): no import cycle, no source file over
 * 400 lines, no function over 80, no '/meta/' or Bayou ext-key literal outside
 * `@bayou/protocol`. `npm test` runs `biome check .` on the repository; this runs the
 * repository's own `biome.json` and lint plugins on small fixtures, so a rule switched off,
 * scoped wrongly or silently broken by a Biome upgrade fails here, and so does an
 * allowance added back to the configuration.
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

  it('switches none of these rules off for any file (no allowance left)', () => {
    const config = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as {
      overrides?: { linter?: { rules?: Record<string, Record<string, unknown>> } }[];
    };
    const watched = ['noExcessiveLinesPerFunction', 'noExcessiveLinesPerFile', 'noImportCycles'];
    const offs = (config.overrides ?? []).flatMap((o) =>
      Object.values(o.linter?.rules ?? {}).flatMap((group) =>
        Object.entries(group).filter(
          ([rule, level]) =>
            watched.includes(rule) && (level === 'off' || (level as { level?: string })?.level === 'off'),
        ),
      ),
    );
    expect(offs).toEqual([]);
  });
});
