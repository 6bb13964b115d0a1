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
};

rmSync('dist', { recursive: true, force: true });
await build({ ...common, format: 'esm', outfile: 'dist/index.js' });
await build({ ...common, format: 'iife', globalName: 'Bayou', minify: true, outfile: 'dist/bayou.min.js' });

const r = spawnSync('node_modules/.bin/tsc', ['-p', 'tsconfig.json'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

for (const file of ['dist/index.js', 'dist/index.d.ts']) {
  if (/from\s*["']@bayou\/protocol["']/.test(readFileSync(file, 'utf8'))) {
    console.error(`${file} imports @bayou/protocol, which is not a runtime dependency`);
    process.exit(1);
  }
}
const gz = gzipSync(readFileSync('dist/bayou.min.js'), { level: 9 }).length;
console.log(`dist/bayou.min.js: ${(gz / 1024).toFixed(2)} KB min+gzip`);
