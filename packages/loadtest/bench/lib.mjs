// @ts-check
// Helpers of the comparison bench: server child processes and /proc CPU and memory readings
// (medians and spreads are src/stats.ts's, flags bench/flags.mjs's).
/** @import { ChildProcess } from 'node:child_process' */
/** @import { Protocol } from '../dist/drivers.js' */
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * A server under comparison: its script in servers/, the script's arguments, and which
 * driver speaks to it.
 * @typedef {{ script: string, args: string[], protocol: Protocol, label: string }} ServerSpec
 */

/**
 * A started bench server: its process, its endpoint, its memory (heap after GC, RSS) on
 * request, and two ways to end it.
 * @typedef {object} BenchServer
 * @property {number} pid
 * @property {string} url
 * @property {() => Promise<{ heapUsed: number, rss: number }>} memory
 * @property {() => Promise<void>} stop SIGTERM, then SIGKILL after 3 s
 * @property {() => Promise<void>} kill ends the process at once (SIGKILL), as a crash would
 */

/**
 * The servers under comparison, by the name the bench flags use.
 * @satisfies {Record<string, ServerSpec>}
 */
export const SERVERS = /** @type {const} */ ({
  'ws-batched': {
    script: 'ws-floor.mjs',
    args: ['batched'],
    protocol: 'bayeux',
    label: 'raw ws, batched per turn',
  },
  'ws-frame': {
    script: 'ws-floor.mjs',
    args: ['frame'],
    protocol: 'bayeux',
    label: 'raw ws, frame per message',
  },
  bayou: { script: 'bayou.mjs', args: [], protocol: 'bayeux', label: 'Bayou' },
  'bayou-baseline': {
    script: 'bayou.mjs',
    args: ['baseline'],
    protocol: 'bayeux',
    label: 'Bayou (baseline build, BAYOU_BASELINE)',
  },
  'lp-floor': {
    script: 'lp-floor.mjs',
    args: [],
    protocol: 'bayeux',
    label: 'raw long-polling floor (node:http)',
  },
  faye: { script: 'faye.mjs', args: [], protocol: 'bayeux', label: 'Faye 1.4' },
  socketio: { script: 'socketio.mjs', args: [], protocol: 'socket.io', label: 'Socket.IO 4.8' },
});

/** @typedef {keyof typeof SERVERS} ServerName */

/**
 * Whether `name` is one of the servers under comparison (a flag's list may hold anything).
 * @param {string} name
 * @returns {name is ServerName}
 */
export function isServerName(name) {
  return Object.hasOwn(SERVERS, name);
}

/**
 * Starts a server in its own process (with --expose-gc for the memory side channel) and
 * resolves once it reports its URL over IPC.
 * @param {ServerName} name
 * @param {string[]} [execArgv]
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<BenchServer>}
 */
export function startServer(name, execArgv = [], env = {}) {
  /** @type {ServerSpec} */
  const spec = SERVERS[name];
  // BAYOU_BASELINE_NODE_ARGS: Node options for the baseline alone (e.g. the same build with
  // `--max-semi-space-size=1`, as `bayou start` forks its workers); BAYOU_BASELINE_ENV:
  // `NAME=value` pairs for its environment alone (e.g. the workers' `MALLOC_ARENA_MAX=1`).
  const baseline = name === 'bayou-baseline';
  const own = baseline ? (process.env.BAYOU_BASELINE_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []) : [];
  const ownEnv = baseline
    ? Object.fromEntries(
        (process.env.BAYOU_BASELINE_ENV?.split(/\s+/).filter(Boolean) ?? []).map((pair) => {
          const at = pair.indexOf('=');
          return at > 0 ? [pair.slice(0, at), pair.slice(at + 1)] : [pair, ''];
        }),
      )
    : {};
  const child = fork(join(here, 'servers', spec.script), spec.args, {
    execArgv: ['--expose-gc', ...execArgv, ...own],
    env: { ...process.env, ...env, ...ownEnv },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pid = child.pid;
  if (pid === undefined) return Promise.reject(new Error(`${name} could not be started`));
  if (serverCpus !== null) setAffinity(pid, serverCpus);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 15_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    /** @param {unknown} raw */
    const onListening = (raw) => {
      const m = /** @type {{ type?: string, url?: string } | null} */ (raw);
      if (m?.type !== 'listening' || typeof m.url !== 'string') return;
      clearTimeout(timer);
      child.off('message', onListening);
      resolve({
        pid,
        url: m.url,
        memory: () => askMemory(child),
        stop: () => stopChild(child),
        kill: () => killChild(child),
      });
    };
    child.on('message', onListening);
  });
}

/**
 * @param {ChildProcess} child
 * @returns {Promise<{ heapUsed: number, rss: number }>}
 */
function askMemory(child) {
  return new Promise((resolve) => {
    /** @param {unknown} raw */
    const onMemory = (raw) => {
      const m = /** @type {{ type?: string, heapUsed: number, rss: number } | null} */ (raw);
      if (m?.type !== 'memory') return;
      child.off('message', onMemory);
      resolve({ heapUsed: m.heapUsed, rss: m.rss });
    };
    child.on('message', onMemory);
    child.send({ type: 'memory' });
  });
}

/**
 * @param {ChildProcess} child
 * @returns {Promise<void>}
 */
function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/**
 * @param {ChildProcess} child
 * @returns {Promise<void>}
 */
function killChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * CPUs the servers are pinned to (a taskset list), or null when nobody is pinned.
 * @type {string | null}
 */
let serverCpus = null;

/**
 * `--server-cpus LIST`: every server started from now on runs on LIST, and this process (the
 * generator) on the other CPUs, as a load generator on its own machine would. Returns the
 * generator's list. Needs `taskset` (util-linux).
 * @param {string} list
 * @returns {string}
 */
export function pinServers(list) {
  const all = cpus().length;
  const chosen = new Set(parseCpuList(list, all));
  const rest = [...Array(all).keys()].filter((c) => !chosen.has(c));
  if (rest.length === 0) {
    throw new Error(
      `--server-cpus ${list} leaves no CPU for the generator (this machine has ${all}: 0-${all - 1})`,
    );
  }
  serverCpus = [...chosen].join(',');
  setAffinity(process.pid, rest.join(','));
  return rest.join(',');
}

/**
 * `0,2-3` → [0, 2, 3]; every CPU must exist on this machine.
 * @param {string} list
 * @param {number} all the machine's CPU count
 * @returns {number[]}
 */
export function parseCpuList(list, all) {
  /** @type {number[]} */
  const out = [];
  for (const part of String(list).split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`--server-cpus: "${part}" is not a CPU number or range (e.g. 0 or 0-1)`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi >= all)
      throw new Error(`--server-cpus: ${part} is outside this machine's CPUs 0-${all - 1}`);
    for (let c = lo; c <= hi; c++) out.push(c);
  }
  return out;
}

/**
 * Pins every thread of `pid` to `list` (a taskset CPU list).
 * @param {number} pid
 * @param {string} list
 */
function setAffinity(pid, list) {
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', list, String(pid)], { stdio: 'ignore' });
  } catch (error) {
    throw new Error(
      `could not pin process ${pid} to CPUs ${list} with taskset (util-linux): ${/** @type {Error} */ (error).message}`,
    );
  }
}

/** This process's own user + system CPU in seconds. */
export function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * utime + stime of a process in seconds, from /proc/<pid>/stat.
 * @param {number} pid
 */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/**
 * utime and stime of a process apart, in seconds.
 * @param {number} pid
 * @returns {{ user: number, system: number }}
 */
export function cpuSplit(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLK_TCK, system: Number(fields[12]) / CLK_TCK };
}
