#!/usr/bin/env node
// @ts-check
// `pnpm bench` in this package: the comparison bench (run.mjs, with every argument), the
// memory-against-Redis engine rows (cluster.mjs --only engines), the rest of the cluster
// bench (cluster.mjs, with --quick when given) and the SDK's default path (sdk.mjs, with
// --quick when given), the streaming transports (streaming.mjs, with --quick when given),
// and what an idle session costs next to a bare `ws` server (idle.mjs, with --quick when given).
// `--only run,engines,cluster,sdk,streaming,idle` runs the parts named, in that order
// (`pnpm bench --only sdk`); with --only sdk every other argument goes to sdk.mjs.
// `--help` lists the parts and the benches run on their own; `--only <part> --help` a
// part's flags. Exits with the first failure.
import { spawnSync } from 'node:child_process';

/** @typedef {'run' | 'engines' | 'cluster' | 'sdk' | 'streaming' | 'idle'} Part */
/** @type {readonly Part[]} */
const PARTS = ['run', 'engines', 'cluster', 'sdk', 'streaming', 'idle'];

/**
 * Every bench script, with what it measures: the parts of `pnpm bench`, then the ones run alone.
 * @type {[script: string, what: string][]}
 */
const BENCHES = [
  [
    'run.mjs',
    'part run: chat over WebSocket and long-polling against Bayou, Faye, Socket.IO and raw floors; storm and restart rows',
  ],
  [
    'cluster.mjs',
    'parts engines and cluster: memory against Redis engine, Redis commands per publish, long-polling through a balancer',
  ],
  [
    'sdk.mjs',
    'part sdk: @bayou/client as it ships against plain clients, with a delay proxy for round trips',
  ],
  [
    'streaming.mjs',
    'part streaming: Bayou HTTP streaming and EventSource against its WebSocket and long-polling and Faye EventSource',
  ],
  [
    'idle.mjs',
    'part idle: 10,000 idle sessions on Bayou next to a bare ws server: RSS, heap, kernel socket memory and idle CPU per session',
  ],
  ['storm.mjs', 'alone: the connection storm and the restart rows (run.mjs runs them too)'],
  ['handshake-timeline.mjs', 'alone: the phases of one WebSocket open (tcp, upgrade, handshake, subscribe)'],
  ['profile-summary.mjs', 'alone: the functions with the most self time in a `node --cpu-prof` profile'],
  ['readme-table.mjs', 'alone: rewrites the root README table from a `pnpm bench --json` file'],
];

/**
 * @param {string} arg
 * @returns {arg is Part}
 */
const isPart = (arg) => PARTS.some((p) => p === arg);

// `pnpm bench -- --only sdk` hands the `--` on: it separates nothing here.
const argv = process.argv.slice(2).filter((a) => a !== '--');
const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
const onlyArg = argv[at] ?? '';
/** @type {readonly Part[]} */
let only = PARTS;
let args = argv;
if (at >= 0) {
  const value = onlyArg.includes('=') ? onlyArg.slice('--only='.length) : argv[at + 1];
  const named = String(value ?? '').split(',');
  const unknown = named.filter((p) => !isPart(p));
  if (unknown.length > 0 || named[0] === '') {
    console.error(`--only takes a comma list of ${PARTS.join(', ')}; got ${value ?? 'nothing'}`);
    process.exit(2);
  }
  only = PARTS.filter((p) => named.includes(p));
  args = argv.filter((_, i) => i !== at && (onlyArg.includes('=') || i !== at + 1));
}
if (only.length > 1 && (args.includes('--help') || args.includes('-h'))) {
  console.log(
    [
      'usage: pnpm bench [--only run,engines,cluster,sdk,streaming,idle] [flags of the part]  (--only <part> --help: its flags)',
      'Every bench of packages/loadtest/bench (run each with `node bench/<script> --help` for its flags):',
      ...BENCHES.map(([script, what]) => `  ${script.padEnd(24)}${what}`),
    ].join('\n'),
  );
  process.exit(0);
}
const quickOnly = args.includes('--quick') ? ['--quick'] : [];
/**
 * @param {string} script
 * @param {string[]} scriptArgs
 */
const run = (script, scriptArgs) =>
  spawnSync(process.execPath, [new URL(script, import.meta.url).pathname, ...scriptArgs], {
    stdio: 'inherit',
  }).status ?? 1;
// Each part's own flags go to it when it runs alone; together, run.mjs gets them all.
const alone = only.length === 1;
/** @type {Record<Part, () => number>} */
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
  streaming: () => run('./streaming.mjs', alone ? args : quickOnly),
  idle: () => run('./idle.mjs', alone ? args : quickOnly),
};
for (const part of only) {
  const status = steps[part]();
  if (status !== 0) process.exit(status);
}
