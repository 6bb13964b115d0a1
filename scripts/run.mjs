#!/usr/bin/env node
// Root task runner behind `npm start`, `npm test`, `npm run build|typecheck|lint|bench`.
// It needs only Node 20 and npm: pnpm is taken from PATH when it is the pinned version,
// otherwise run through `npx -y pnpm@<version>`; services the tests need are provisioned
// by scripts/services.mjs.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
}
function build() {
  runPnpm(['-r', '--workspace-concurrency=1', 'run', 'build']);
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
    install();
    build();
    // The chat demo on http://localhost:8080 (PORT and HOST override), served by @bayou/server.
    runPnpm(['--filter', '@bayou/example-chat', 'run', 'start']);
    break;
  case 'grid':
    install();
    build();
    // The live price grid over the demo feed on http://localhost:8080 (PORT, HOST, GRID_SYMBOLS, GRID_RATE).
    runPnpm(['--filter', '@bayou/example-grid', 'run', 'start']);
    break;
  default:
    console.error(
      `usage: node scripts/run.mjs <start|test|build|typecheck|lint|bench|grid> (got ${task ?? 'nothing'})`,
    );
    process.exit(2);
}
