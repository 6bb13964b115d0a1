#!/usr/bin/env node
// The CommonJS half of a package's build, run from the package directory after its ESM build:
//   node ../../scripts/build-cjs.mjs [--platform node|browser|neutral] [--banner "'use client';"] [--inline name]…
// - dist/index.cjs: src/index.ts bundled by esbuild as CommonJS; dependencies stay external
//   (they resolve to their own `require` entries), except those named by --inline: packages
//   that ship only ES modules, which Node 20 before 20.19 cannot require(). `import.meta.url`
//   points at the file itself.
// - dist/cjs/*.d.ts: the ESM build's declarations, copied under a `{"type":"commonjs"}`
//   package.json so TypeScript reads them as CommonJS types for `require` consumers.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// esbuild is a devDependency of every package built here: resolve it from the package, so a
// filtered install (`pnpm install --filter "@bayou/server..."`, as in the Dockerfiles) has it.
const { build } = await import(pathToFileURL(createRequire(resolve('package.json')).resolve('esbuild')).href);

const { values } = parseArgs({
  options: {
    platform: { type: 'string', default: 'node' },
    banner: { type: 'string', default: '' },
    entry: { type: 'string', default: 'src/index.ts' },
    inline: { type: 'string', multiple: true, default: [] },
  },
});
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const inline = new Set(values.inline);
const external = Object.keys({
  ...manifest.dependencies,
  ...manifest.peerDependencies,
  ...manifest.optionalDependencies,
})
  .filter((name) => !inline.has(name))
  .flatMap((name) => [name, `${name}/*`]);
const platform = /** @type {'node' | 'browser' | 'neutral'} */ (values.platform);
const usesImportMeta = /import\.meta\.url/.test(
  readdirSync('src', { recursive: true })
    .filter((f) => /\.tsx?$/.test(String(f)) && !/\.test\.tsx?$/.test(String(f)))
    .map((f) => readFileSync(join('src', String(f)), 'utf8'))
    .join('\n'),
);

await build({
  entryPoints: [values.entry],
  outfile: 'dist/index.cjs',
  bundle: true,
  format: 'cjs',
  platform,
  target: 'es2022',
  // Node's own modules and every dependency not inlined stay require() calls.
  external: [...external, 'node:*'],
  jsx: 'automatic',
  sourcemap: true,
  logLevel: 'warning',
  banner: {
    js: [
      values.banner,
      usesImportMeta
        ? "const __bayouImportMetaUrl = require('node:url').pathToFileURL(__filename).href;"
        : '',
    ]
      .filter(Boolean)
      .join('\n'),
  },
  define: usesImportMeta ? { 'import.meta.url': '__bayouImportMetaUrl' } : {},
});

// Declarations: every dist/**/*.d.ts except dist/cjs itself, without their source-map comments.
rmSync('dist/cjs', { recursive: true, force: true });
const declarations = readdirSync('dist', { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.d.ts') && !f.startsWith('cjs/'));
for (const file of declarations) {
  const to = join('dist/cjs', file);
  mkdirSync(dirname(to), { recursive: true });
  const text = readFileSync(join('dist', file), 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
  writeFileSync(to, text);
}
writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);
if (!declarations.includes('index.d.ts')) {
  console.error('build-cjs: dist/index.d.ts is missing; run the ESM build first');
  process.exit(1);
}
console.log(`dist/index.cjs and ${declarations.length} declarations in dist/cjs (${platform})`);
