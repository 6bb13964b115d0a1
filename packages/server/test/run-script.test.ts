/**
 * `npm start` and `npm run grid` skip `pnpm install` and the build on a tree where neither
 * has anything to do (scripts/freshness.mjs), and do both on a clean clone or after a change:
 * a fixture workspace with controlled modification times.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildReason, installReason, markBuilt, markInstalled } from '../../../scripts/freshness.mjs';

const T0 = new Date('2026-01-01T00:00:00Z');
const later = (s: number) => new Date(T0.getTime() + s * 1000);

function workspace(): { root: string; write(path: string, text?: string, at?: Date): void } {
  const root = mkdtempSync(join(tmpdir(), 'bayou-fresh-'));
  const write = (path: string, text = '{}', at = T0) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    utimesSync(join(root, path), at, at);
  };
  for (const file of ['pnpm-lock.yaml', 'package.json', 'tsconfig.base.json', 'scripts/build-cjs.mjs'])
    write(file);
  write('packages/server/package.json', JSON.stringify({ scripts: { build: 'tsc -b' } }));
  write('packages/server/src/index.ts', 'export {};');
  write('packages/server/admin/page.ts', 'export {};');
  write('packages/server/dist/index.js', '');
  write('examples/hello/package.json', JSON.stringify({ scripts: { start: 'node server.mjs' } }));
  mkdirSync(join(root, 'node_modules'));
  return { root, write };
}

/** Stamps as the script writes them, at `at`. */
function stamp(root: string, at: Date): void {
  markInstalled(root);
  markBuilt(root);
  for (const file of ['.bayou-installed', '.bayou-built'])
    utimesSync(join(root, 'node_modules', file), at, at);
}

describe('npm start on a tree already installed and built', () => {
  it('installs and builds a clean clone (no stamps)', () => {
    const { root } = workspace();
    expect(installReason(root)).toMatch(/not installed/);
    expect(buildReason(root)).toMatch(/not built/);
  });

  it('skips both when nothing changed since the stamps', () => {
    const { root } = workspace();
    stamp(root, later(10));
    expect(installReason(root)).toBeNull();
    expect(buildReason(root)).toBeNull();
  });

  it('builds again after a source change, and only then (tests, dist and node_modules do not count)', () => {
    const { root, write } = workspace();
    stamp(root, later(10));
    write('packages/server/src/kernel.test.ts', '', later(20));
    write('packages/server/src/node_modules/x.js', '', later(20));
    expect(buildReason(root)).toBeNull();
    write('packages/server/admin/page.ts', 'export const x = 1;', later(20));
    expect(buildReason(root)).toBe('packages/server/admin/page.ts changed since the last build');
    expect(installReason(root)).toBeNull();
  });

  it('installs again when the lockfile or a package manifest changed, and builds again for the lockfile', () => {
    const { root, write } = workspace();
    stamp(root, later(10));
    write('examples/hello/package.json', '{}', later(20));
    expect(installReason(root)).toBe('examples/hello/package.json changed since the last install');
    write('pnpm-lock.yaml', '', later(30));
    expect(buildReason(root)).toBe('pnpm-lock.yaml changed since the last build');
  });

  it('builds when a package that builds has no dist', () => {
    const { root, write } = workspace();
    write('packages/protocol/package.json', JSON.stringify({ scripts: { build: 'tsc -b' } }));
    stamp(root, later(10));
    expect(buildReason(root)).toBe('packages/protocol/dist is missing');
  });
});
