// Builds @bayou/client: an ESM bundle (dist/index.js), a minified IIFE for <script> tags
// (dist/bayou.min.js, global `Bayou`) and the .d.ts files. esbuild bundles the few
// @bayou/protocol helpers in, so the package has no runtime dependency.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const common = {
  entryPoints: ['src/index.ts'],
  bundle: true,
  platform: 'browser',
  target: 'es2020',
  sourcemap: true,
  // @bayou/protocol's frozen tables (`DEFAULTS`) the client does not read are dropped: a
  // call's result unused is dead code (no source here freezes without using the result).
  pure: ['Object.freeze'],
};

rmSync('dist', { recursive: true, force: true });
await build({ ...common, format: 'esm', outfile: 'dist/index.js' });
await build({ ...common, format: 'iife', globalName: 'Bayou', minify: true, outfile: 'dist/bayou.min.js' });
// The shared connection (sharedConnection: true) is its own entry: the main bundle only has its hook.
const shared = { ...common, entryPoints: ['src/shared.ts'] };
await build({ ...shared, format: 'esm', outfile: 'dist/shared.js' });
await build({ ...shared, format: 'cjs', target: 'es2022', outfile: 'dist/shared.cjs' });
await build({
  ...shared,
  format: 'iife',
  globalName: 'Bayou',
  minify: true,
  outfile: 'dist/bayou-shared.min.js',
});
// The hub in a SharedWorker (option sharedWorker: the URL where the app serves this file).
await build({
  ...common,
  entryPoints: ['src/shared-worker.ts'],
  format: 'iife',
  minify: true,
  outfile: 'dist/bayou-shared-worker.js',
});
// The delta decoder, a separate entry (`@bayou/client/deltas`) that the core bundle leaves out.
const deltas = { ...common, entryPoints: ['src/deltas.ts'] };
await build({ ...deltas, format: 'esm', outfile: 'dist/deltas.js' });
await build({ ...deltas, format: 'cjs', target: 'es2022', outfile: 'dist/deltas.cjs' });

const r = spawnSync('node_modules/.bin/tsc', ['-p', 'tsconfig.json'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

for (const file of [
  'dist/index.js',
  'dist/index.d.ts',
  'dist/shared.js',
  'dist/shared.d.ts',
  'dist/deltas.js',
  'dist/deltas.d.ts',
]) {
  if (/from\s*["']@bayou\/protocol["']/.test(readFileSync(file, 'utf8'))) {
    console.error(`${file} imports @bayou/protocol, which is not a runtime dependency`);
    process.exit(1);
  }
}
for (const file of ['dist/bayou.min.js', 'dist/bayou-shared.min.js']) {
  const gz = gzipSync(readFileSync(file), { level: 9 }).length;
  console.log(`${file}: ${(gz / 1024).toFixed(2)} KB min+gzip`);
}
