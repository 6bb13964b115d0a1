// Builds the page and the server entry once before the chat tests, so they always run
// against the current sources (esbuild takes well under a second).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync(process.execPath, ['build.mjs'], { cwd, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`examples/chat build failed (exit ${r.status})`);
}
