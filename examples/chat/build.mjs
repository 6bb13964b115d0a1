// Builds the chat demo: the page (src/page → dist/public: app.js bundled by esbuild with
// @bayou/client inside, index.html, style.css) and the server entry (src/server/main.ts →
// dist/server.js, with its dependencies left as imports).
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
const pub = join(dist, 'public');

rmSync(dist, { recursive: true, force: true });
mkdirSync(pub, { recursive: true });

await build({
  entryPoints: [join(root, 'src/page/main.ts')],
  outfile: join(pub, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
});
for (const file of ['index.html', 'style.css']) copyFileSync(join(root, 'src/page', file), join(pub, file));

await build({
  entryPoints: [join(root, 'src/server/main.ts')],
  outfile: join(dist, 'server.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
