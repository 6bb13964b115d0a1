#!/usr/bin/env node
// @ts-check
// The cluster bench (run by `pnpm bench` after the comparison bench; loopback only):
// 1. `engines`: one node with the memory engine against the same node with the Redis
//    engine, in one sitting (engines.mjs): WebSocket chat (1,000 clients, 100 rooms, 10 rooms
//    each → fan-out 100) at saturation and at a fixed 20,000 delivered msg/s; node CPU per
//    delivered message, messages per frame, p50/p99, and Redis CPU, commands, bytes and
//    socket reads/writes per publication;
// 2. Redis commands per published message against the number of nodes and subscribers
//    (cluster-commands.mjs: INFO commandstats, the nodes' heartbeats measured while idle
//    and subtracted);
// 3. long-polling through a round-robin balancer with no affinity, 3 nodes, against 1 node
//    direct: server CPU per delivered message and latency percentiles.
// Every server runs in its own process; CPU is utime+stime from /proc over the measured
// window. `--only engines` (or `commands`, `lp`, a comma list) runs some parts alone;
// `--engines memory,redis,redis-ap,redis-baseline` adds variants to the engines part
// (ioredis auto-pipelining; another build's engine through BAYOU_BASELINE). `--idle N` (off by
// default) adds N idle WebSocket sessions on `bayou start --workers <idle-workers> --redis`,
// held `--idle-hold` ms: RSS per session, CPU while idle, Redis memory per session
// (cluster-idle.mjs). Needs redis-server (REDIS_SERVER_PATH or PATH); without one it says so
// and exits 0.
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { median } from '../dist/stats.js';
import { commandsPerPublish } from './cluster-commands.mjs';
import { idleSessions } from './cluster-idle.mjs';
import { forkScript, startNodes, startRedis } from './cluster-processes.mjs';
import { enginesTable, measureEngines } from './engines.mjs';
import { benchFlags } from './flags.mjs';
import { runWithGenerator } from './generators/run-generator.mjs';
import { cpuSeconds } from './lib.mjs';

/** @import { Transport } from '../dist/index.js' */
/** @import { CommandsRow } from './cluster-commands.mjs' */
/** @import { IdleRow } from './cluster-idle.mjs' */
/** @import { BenchRedis } from './cluster-processes.mjs' */
/** @import { EngineRun } from './engines.mjs' */

/**
 * One long-polling setup's figures.
 * @typedef {{ variant: string, delivered: number, nodesUs: number, redisUs: number, balancerUs: number, p50: number, p99: number, lost: number }} LpRow
 */

const DEFAULTS = {
  rounds: 2,
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  warmup: 1000,
  engines: 'memory,redis',
  // Publisher shapes of the engines part: session (a feed), clients (chat), api (a backend).
  shapes: 'session,clients,api',
  enginesRounds: 3,
  enginesRate: 20000,
  // Saturation comes first on each node and warms it up (V8 optimizes the Redis engine's
  // per-publication code, ioredis' included) before the fixed rate is measured.
  enginesWarmup: 3000,
  outstanding: 5000,
  measure: 5000,
  lpClients: 1000,
  lpRate: 50,
  lpGenerator: 'lean',
  publishes: 500,
  only: 'engines,lp,commands',
  idle: 0,
  idleWorkers: 6,
  idleHold: 60000,
  quick: false,
};
const QUICK = {
  rounds: 1,
  enginesRounds: 1,
  enginesWarmup: 1000,
  enginesRate: 5000,
  clients: 200,
  rooms: 20,
  measure: 2000,
  lpClients: 200,
  publishes: 100,
};
// --quick shrinks every size the command line did not set itself.
const flags = benchFlags('node bench/cluster.mjs', DEFAULTS, QUICK);
/** @param {string} text */
const log = (text) => process.stderr.write(`${text}\n`);

// ---- long-polling runs (the engines part is engines.mjs) -------------------------------

/**
 * One chat run at a fixed rate with the CPU of every process in `pids` over its window.
 * @param {string} url
 * @param {Transport} transport
 * @param {number} rate publishes per second
 * @param {number} clients
 * @param {number[]} pids
 * @param {{ generator?: string, warmup?: number }} [options]
 */
async function chatRun(
  url,
  transport,
  rate,
  clients,
  pids,
  { generator = 'lean', warmup = flags.warmup } = {},
) {
  /** @type {{ before: number[], after: number[] }} */
  const cpu = { before: [], after: [] };
  const result = await runWithGenerator(
    generator,
    'chat',
    {
      url,
      transport,
      clients,
      rooms: flags.rooms,
      roomsPerClient: flags.roomsPerClient,
      messageSize: 50,
      batchSize: 10,
      rate,
      duration: flags.measure,
      warmup,
      drain: 5000,
      metricsUrl: 'off',
      localAddresses: [],
    },
    {
      protocol: 'bayeux',
      onWindow: (event) => {
        cpu[event === 'open' ? 'before' : 'after'] = pids.map((pid) => cpuSeconds(pid));
      },
    },
  );
  const used = pids.map((_, i) => (cpu.after[i] ?? Number.NaN) - (cpu.before[i] ?? Number.NaN));
  const delivered = Math.max(1, result.deliveredInWindow);
  return {
    delivered: result.deliveredPerSecond,
    cpuUs: used.map((s) => (s * 1e6) / delivered),
    p50: result.latency.p50,
    p99: result.latency.p99,
    lost: (result.messages.lost ?? 0) + (result.messages.duplicated ?? 0) + result.sessions.failed,
  };
}

// ---- 3. long-polling: 3 nodes behind the balancer vs 1 node direct --------------------

/**
 * @param {string} variant lp-1-memory, lp-1-redis or lp-3-balanced
 * @param {BenchRedis} redis
 * @returns {Promise<LpRow>}
 */
async function longPolling(variant, redis) {
  const count = variant === 'lp-3-balanced' ? 3 : 1;
  const nodes = await startNodes(count, variant === 'lp-1-memory' ? null : redis);
  const balancer =
    count > 1
      ? await forkScript(
          'round-robin.mjs',
          nodes.map((n) => String(n.port)),
        )
      : null;
  try {
    const url = balancer ? balancer.url : (nodes[0]?.url ?? '');
    const pids = [...nodes.map((n) => n.pid), redis.pid ?? 0, ...(balancer ? [balancer.pid] : [])];
    const r = await chatRun(url, 'long-polling', flags.lpRate, flags.lpClients, pids, {
      generator: flags.lpGenerator,
    });
    const nodesUs = r.cpuUs.slice(0, count).reduce((a, b) => a + b, 0);
    return {
      variant,
      delivered: r.delivered,
      nodesUs,
      redisUs: variant === 'lp-1-memory' ? 0 : (r.cpuUs[count] ?? Number.NaN),
      balancerUs: balancer ? (r.cpuUs[count + 1] ?? Number.NaN) : 0,
      p50: r.p50,
      p99: r.p99,
      lost: r.lost,
    };
  } finally {
    await balancer?.stop();
    for (const n of nodes) await n.stop();
  }
}

// ---- main ----------------------------------------------------------------------------

const redis = await startRedis();
if (redis === null) {
  log('cluster bench: no redis-server (set REDIS_SERVER_PATH or install it): skipped');
  process.exit(0);
}
const parts = new Set(flags.only.split(','));
const started = Date.now();
/** @type {Record<string, EngineRun[]> | null} */
let engines = null;
/** @type {Record<string, LpRow[]>} */
const lp = { 'lp-1-memory': [], 'lp-1-redis': [], 'lp-3-balanced': [] };
/** @type {CommandsRow[]} */
const commands = [];
/** @type {IdleRow | null} */
let idle = null;
try {
  if (parts.has('engines') || parts.has('ws')) {
    log(`cluster bench: engines, ${flags.enginesRounds} rounds`);
    engines = await measureEngines(redis, { ...flags, rounds: flags.enginesRounds }, log);
  }
  for (let round = 0; parts.has('lp') && round < flags.rounds; round++) {
    log(`cluster bench round ${round + 1}/${flags.rounds}`);
    for (const variant of parts.has('lp') ? Object.keys(lp) : []) {
      const r = await longPolling(variant, redis);
      log(`  ${variant}: ${JSON.stringify(r)}`);
      lp[variant]?.push(r);
    }
  }
  for (const [nodes, subs] of parts.has('commands')
    ? /** @type {const} */ ([
        [1, 10],
        [1, 1000],
        [3, 10],
        [3, 1000],
      ])
    : []) {
    const r = await commandsPerPublish(nodes, Math.min(subs, flags.clients), redis, flags.publishes);
    log(`  commands: ${JSON.stringify(r)}`);
    commands.push(r);
  }
  if (flags.idle > 0) {
    idle = await idleSessions(redis, flags);
    log(`  idle: ${JSON.stringify(idle)}`);
  }
} finally {
  redis.stop();
}

/**
 * @param {number} x
 * @param {number} [d]
 */
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
/**
 * @param {LpRow[]} runs
 * @param {'delivered' | 'nodesUs' | 'redisUs' | 'balancerUs' | 'p50' | 'p99'} key
 */
const med = (runs, key) => median(runs.map((r) => r[key]));
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {}
const out = [];
out.push(
  `### Cluster bench (Node ${process.version}, ${cpus().length} CPUs, repository at ${commit}, ${Math.round((Date.now() - started) / 1000)} s, medians of ${parts.has('lp') ? flags.rounds : flags.enginesRounds} rounds)`,
);
if (engines !== null) {
  out.push('');
  out.push(...enginesTable(engines, { ...flags, rounds: flags.enginesRounds }));
}
if (parts.has('commands')) {
  out.push('');
  out.push(
    `**Redis commands per published message** (channel \`/bench/room/a\`, ${flags.publishes} publishes, heartbeats subtracted):`,
  );
  out.push('');
  out.push(
    '| nodes | subscribers | commands per publish | main commands per publish | subscribers missing messages |',
  );
  out.push('|---|---|---|---|---|');
  for (const c of commands) {
    const by = Object.entries(c.byCommand)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    out.push(`| ${c.nodes} | ${c.subscribers} | ${f(c.perPublish, 2)} | ${by} | ${c.missing} |`);
  }
}
if (parts.has('lp')) {
  out.push('');
  out.push(
    `**Long-polling**: chat, ${flags.lpClients} clients, fan-out ${(flags.lpClients * flags.roomsPerClient) / flags.rooms}, ${flags.lpRate} publishes/s, ${flags.lpGenerator} generator; 3 nodes behind a round-robin balancer with no affinity (every request to the next node) against 1 node direct.`,
  );
  out.push('');
  out.push(
    '| setup | delivered msg/s | nodes CPU µs per delivered msg | redis-server µs | balancer µs | p50 ms | p99 ms | lost |',
  );
  out.push('|---|---|---|---|---|---|---|---|');
  for (const [v, runs] of Object.entries(lp))
    out.push(
      `| ${v} | ${Math.round(med(runs, 'delivered'))} | ${f(med(runs, 'nodesUs'), 2)} | ${f(med(runs, 'redisUs'), 2)} | ${f(med(runs, 'balancerUs'), 2)} | ${f(med(runs, 'p50'), 1)} | ${f(med(runs, 'p99'), 1)} | ${runs.reduce((a, r) => a + r.lost, 0)} |`,
    );
}
if (idle !== null) {
  out.push('');
  out.push(
    `**Idle WebSocket sessions**: ${idle.sessions} sessions (${idle.failed} failed) on \`bayou start --workers ${idle.workers} --redis\`, each subscribed to one channel, held ${flags.idleHold / 1000} s with their heartbeats.`,
  );
  out.push('');
  out.push(
    '| RSS per session (all workers) | CPU while idle (all workers) | Redis memory per session | Redis keys added |',
  );
  out.push('|---|---|---|---|');
  out.push(
    `| ${f(idle.rssPerSession / 1024, 1)} KB | ${f(idle.idleCpuPercent, 1)}% of one core | ${f(idle.redisPerSession, 1)} bytes | ${idle.redisKeys} |`,
  );
}
console.log(out.join('\n'));
