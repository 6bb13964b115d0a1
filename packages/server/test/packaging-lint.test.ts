/**
 * Every publishable package passes publint (strict) and "Are the types wrong?" (attw), and
 * carries what the registry needs: a LICENSE, repository/homepage/bugs, public access, a
 * build on prepack, a changelog, and one `ws` range across the repository.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const PACKAGES = ['protocol', 'server', 'browser-client', 'react-bindings', 'loadtest'];
const work = mkdtempSync(join(tmpdir(), 'bayou-lint-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'));
const rootPkg = read('package.json');

describe.each(PACKAGES)('packages/%s', (dir) => {
  const pkgDir = join(root, 'packages', dir);
  const pkg = read(`packages/${dir}/package.json`);

  it('passes publint in strict mode', async () => {
    const { messages } = await publint({ pkgDir, pack: 'npm', strict: true });
    expect(messages).toEqual([]);
  }, 60_000);

  it('passes attw: types and JavaScript agree for node10, node16 (ESM and CJS) and bundlers', async () => {
    const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
      cwd: pkgDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tarball = join(work, (JSON.parse(out) as { filename: string }[])[0]?.filename as string);
    // The IIFE files of @bayou/client are for <script> tags (and the SharedWorker's script
    // for `new SharedWorker(url)`), not for import or require.
    const scripts = ['./bayou.min.js', './bayou-shared.min.js', './bayou-shared-worker.js'];
    const exclude = dir === 'browser-client' ? ['--exclude-entrypoints', ...scripts] : [];
    const result = await run(
      join(root, 'node_modules/.bin/attw'),
      [tarball, '--format', 'ascii', ...exclude],
      {
        cwd: work,
      },
    ).catch((e) => e);
    expect(result.code ?? 0, `${result.stdout}${result.stderr}`).toBe(0);
  }, 60_000);

  it('has what the registry needs: LICENSE, repository, homepage, bugs, public access, prepack, changelog', () => {
    expect(pkg.license).toBe('MIT');
    expect(existsSync(join(pkgDir, 'LICENSE'))).toBe(true);
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    expect(pkg.files).toContain('LICENSE');
    expect(pkg.files).toContain('CHANGELOG.md');
    expect(existsSync(join(pkgDir, 'CHANGELOG.md'))).toBe(true);
    expect(pkg.repository).toEqual({ ...rootPkg.repository, directory: `packages/${dir}` });
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\//);
    expect(pkg.publishConfig).toEqual({ access: 'public' });
    expect(pkg.scripts.prepack).toBe('npm run build');
  });

  it('exports `types`, `import` and `require` for its entry', () => {
    const entry = pkg.exports['.'];
    expect(entry.import).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(entry.require).toEqual({ types: './dist/cjs/index.d.ts', default: './dist/index.cjs' });
  });
});

describe('dependencies across the repository', () => {
  const manifests = [
    ...PACKAGES.map((d) => `packages/${d}/package.json`),
    'examples/chat/package.json',
    'examples/grid/package.json',
    'examples/hello/package.json',
  ]
    .filter((p) => existsSync(join(root, p)))
    .map((p) => [p, read(p)] as const);

  it('use one `ws` range', () => {
    const ranges = new Set<string>();
    for (const [, pkg] of manifests)
      for (const section of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'])
        if (pkg[section]?.ws) ranges.add(pkg[section].ws);
    expect([...ranges]).toHaveLength(1);
  });

  it('need no native build: bufferutil is optional wherever it is listed', () => {
    for (const [path, pkg] of manifests) {
      expect(pkg.dependencies?.bufferutil, path).toBeUndefined();
    }
  });

  it('let the workspace root run its own commands: `bayou` and `bayou-loadtest`', () => {
    // link: rather than workspace:*, which makes `pnpm deploy` of @bayou/server (the
    // Dockerfile) look for @bayou/protocol on the registry.
    expect(rootPkg.dependencies).toEqual({
      '@bayou/server': 'link:packages/server',
      '@bayou/loadtest': 'link:packages/loadtest',
    });
    expect(existsSync(join(root, 'node_modules/.bin/bayou'))).toBe(true);
    expect(existsSync(join(root, 'node_modules/.bin/bayou-loadtest'))).toBe(true);
  });

  it('version with changesets', () => {
    const config = read('.changeset/config.json');
    expect(config.access).toBe('public');
    expect(rootPkg.devDependencies['@changesets/cli']).toBeDefined();
  });
});
