#!/usr/bin/env node
// `pnpm bench` in this package: the comparison bench (run.mjs, with every argument), the
// memory-against-Redis engine rows (cluster.mjs --only engines), the rest of the cluster
// bench (cluster.mjs, with --quick when given) and the SDK's default path (sdk.mjs, with
// --quick when given). `--only run,engines,cluster,sdk` runs the parts named, in that order
// (`pnpm bench --only sdk`); with --only sdk every other argument goes to sdk.mjs.
// Exits with the first failure.
import { spawnSync } from 'node:child_process';

const PARTS = ['run', 'engines', 'cluster', 'sdk'];
// `pnpm bench -- --only sdk` hands the `--` on: it separates nothing here.
const argv = process.argv.slice(2).filter((a) => a !== '--');
const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
let only = PARTS;
let args = argv;
if (at >= 0) {
  const value = argv[at].includes('=') ? argv[at].slice('--only='.length) : argv[at + 1];
  only = String(value ?? '').split(',');
  const unknown = only.filter((p) => !PARTS.includes(p));
  if (unknown.length > 0 || only.length === 0 || only[0] === '') {
    console.error(`--only takes a comma list of ${PARTS.join(', ')}; got ${value ?? 'nothing'}`);
    process.exit(2);
  }
  args = argv.filter((_, i) => i !== at && (argv[at].includes('=') || i !== at + 1));
}
const quickOnly = args.includes('--quick') ? ['--quick'] : [];
const run = (script, scriptArgs) =>
  spawnSync(process.execPath, [new URL(script, import.meta.url).pathname, ...scriptArgs], {
    stdio: 'inherit',
  }).status ?? 1;
// Each part's own flags go to it when it runs alone; together, run.mjs gets them all.
const alone = only.length === 1;
const steps = {
  run: () => run('./run.mjs', args),
  // The memory-against-Redis rows of the cluster bench, alone: `pnpm bench --only engines`.
  engines: () => run('./cluster.mjs', ['--only', 'engines', ...(alone ? args : quickOnly)]),
  cluster: () =>
    run('./cluster.mjs', [
      ...(only.includes('engines') ? ['--only', 'commands,lp'] : []),
      ...(alone ? args : quickOnly),
    ]),
  sdk: () => run('./sdk.mjs', alone ? args : quickOnly),
};
for (const part of PARTS.filter((p) => only.includes(p))) {
  const status = steps[part]();
  if (status !== 0) process.exit(status);
}
