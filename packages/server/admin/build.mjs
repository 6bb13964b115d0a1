// Bundles the console page's script (admin/console.ts with @bayou/client from its source)
// into dist/admin/console.js, which `bayou start --admin` serves at /admin/console.js.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (rel) => fileURLToPath(new URL(rel, import.meta.url));

await build({
  entryPoints: [here('./console.ts')],
  outfile: here('../dist/admin/console.js'),
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  alias: { '@bayou/client': here('../../browser-client/src/index.ts') },
  logLevel: 'warning',
});
