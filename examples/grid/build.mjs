// Builds the grid demo: the page (src/page → dist/public: app.js bundled by esbuild with
// React, @bayou/react and @bayou/client inside, index.html, style.css) and the server
// (src/server → dist/server.js, the start script, and dist/grid-server.js, the library the
// bench uses; their dependencies stay imports).
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
  entryPoints: [join(root, 'src/page/main.tsx')],
  outfile: join(pub, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2020',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
});
for (const file of ['index.html', 'style.css']) copyFileSync(join(root, 'src/page', file), join(pub, file));

await build({
  entryPoints: {
    server: join(root, 'src/server/main.ts'),
    'grid-server': join(root, 'src/server/grid-server.ts'),
  },
  outdir: dist,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
