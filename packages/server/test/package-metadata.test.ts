/** Every published package behaves like a package: exports with types, files, a README. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const packagesDir = resolve(import.meta.dirname, '../..');
const names = readdirSync(packagesDir).filter((d) => existsSync(join(packagesDir, d, 'package.json')));

describe.each(names)('package %s', (dir) => {
  const pkg = JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8'));

  it('has an exports map whose entry declares types for import and for require', () => {
    const entry = pkg.exports?.['.'];
    expect(entry).toBeDefined();
    expect(typeof entry.import?.types).toBe('string');
    expect(typeof entry.require?.types).toBe('string');
  });

  it('lists the files it publishes and has a README', () => {
    expect(Array.isArray(pkg.files) && pkg.files.length > 0).toBe(true);
    expect(existsSync(join(packagesDir, dir, 'README.md'))).toBe(true);
  });

  it('depends on sibling packages by version range, so npm pack output installs', () => {
    const deps = { ...pkg.dependencies, ...pkg.peerDependencies };
    for (const [name, range] of Object.entries(deps)) {
      if (name.startsWith('@bayou/')) expect(String(range)).not.toMatch(/^workspace:/);
    }
  });
});
