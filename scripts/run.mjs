#!/usr/bin/env node
// Root task runner behind `npm start`, `npm test`, `npm run build|typecheck|lint|bench`.
// It needs only Node 20 and npm: pnpm is taken from PATH when it is the pinned version,
// otherwise run through `npx -y pnpm@<version>`; services the tests need are provisioned
// by scripts/services.mjs.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReason, installReason, markBuilt, markInstalled } from './freshness.mjs';
import { serve } from './serve.mjs';
import { provisionServices } from './services.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '10.34.9';
const ci = process.env.CI === 'true' || process.env.CI === '1';

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === PNPM_VERSION) return ['pnpm'];
  return ['npx', '-y', `pnpm@${PNPM_VERSION}`];
}

const pnpm = pnpmCommand();
const runPnpm = (args, env) => run(pnpm[0], [...pnpm.slice(1), ...args], env);

function install() {
  runPnpm(['install', ...(ci ? ['--frozen-lockfile'] : []), '--reporter=append-only']);
  markInstalled(root);
}
function build() {
  runPnpm(['-r', '--workspace-concurrency=1', 'run', 'build']);
  markBuilt(root);
}

/**
 * `npm start` and `npm run grid`: install and build only when something they read changed
 * since the last time this script did (scripts/freshness.mjs); BAYOU_REBUILD=1 forces both.
 * A clean clone, CI and every other task always install and build.
 */
function installAndBuildIfStale() {
  const forced = process.env.BAYOU_REBUILD === '1' || ci ? 'BAYOU_REBUILD=1 or CI' : null;
  step('install', forced ?? installReason(root), install);
  // Asked after the install, which may have changed what the build reads.
  step('build', forced ?? buildReason(root), build);
}

function step(name, reason, action) {
  if (reason === null) {
    console.log(`bayou: ${name} up to date, skipped (BAYOU_REBUILD=1 forces it)`);
    return;
  }
  console.log(`bayou: ${name}: ${reason}`);
  action();
}

const task = process.argv[2];
const rest = process.argv.slice(3);
switch (task) {
  case 'build':
    install();
    build();
    break;
  case 'typecheck':
    install();
    build();
    runPnpm(['-r', '--if-present', 'run', 'typecheck']);
    break;
  case 'lint':
    install();
    runPnpm(['exec', 'biome', 'check', '.']);
    break;
  case 'test': {
    install();
    build();
    runPnpm(['exec', 'biome', 'check', '.']);
    // Type errors fail CI too, in what the builds leave out: tests, the admin page, the bench scripts.
    runPnpm(['-r', '--if-present', 'run', 'typecheck']);
    const services = await provisionServices({ ci });
    try {
      runPnpm(['exec', 'vitest', 'run', ...rest], { ...process.env, ...services.env });
    } finally {
      await services.stop();
    }
    break;
  }
  case 'bench':
    install();
    build();
    runPnpm(['-r', '--if-present', '--workspace-concurrency=1', 'run', 'bench', ...rest]);
    break;
  case 'start':
    installAndBuildIfStale();
    // The chat demo on http://localhost:8080 (PORT and HOST override), served by @bayou/server.
    await serve(pnpm[0], [...pnpm.slice(1), '--filter', '@bayou/example-chat', 'run', 'start'], root);
    break;
  case 'grid':
    installAndBuildIfStale();
    // The live price grid over the demo feed on http://localhost:8080 (PORT, HOST, GRID_SYMBOLS, GRID_RATE).
    await serve(pnpm[0], [...pnpm.slice(1), '--filter', '@bayou/example-grid', 'run', 'start'], root);
    break;
  default:
    console.error(
      `usage: node scripts/run.mjs <start|test|build|typecheck|lint|bench|grid> (got ${task ?? 'nothing'})`,
    );
    process.exit(2);
}
