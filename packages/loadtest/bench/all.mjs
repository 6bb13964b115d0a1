#!/usr/bin/env node
// `pnpm bench` in this package: the comparison bench (run.mjs, with every argument), then
// the cluster bench (cluster.mjs, with --quick when given). Exits with the first failure.
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const run = (script, scriptArgs) =>
  spawnSync(process.execPath, [new URL(script, import.meta.url).pathname, ...scriptArgs], {
    stdio: 'inherit',
  }).status ?? 1;
const first = run('./run.mjs', args);
if (first !== 0) process.exit(first);
process.exit(run('./cluster.mjs', args.includes('--quick') ? ['--quick'] : []));
