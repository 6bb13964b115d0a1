// Builds the page and the server entry once before the grid tests, so they always run
// against the current sources (esbuild takes about a second).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync(process.execPath, ['build.mjs'], { cwd, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`examples/grid build failed (exit ${r.status})`);
}
