// Helpers of the comparison bench: server child processes, /proc CPU and memory readings,
// medians and spreads.
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** The servers under comparison: script, arguments, and which driver speaks to them. */
export const SERVERS = {
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
};

/**
 * Starts a server in its own process (with --expose-gc for the memory side channel) and
 * resolves with { pid, url, memory(), stop() } once it reports its URL over IPC.
 */
export function startServer(name, execArgv = [], env = {}) {
  const spec = SERVERS[name];
  const child = fork(join(here, 'servers', spec.script), spec.args, {
    execArgv: ['--expose-gc', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (serverCpus !== null) setAffinity(child.pid, serverCpus);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 15_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    child.on('message', function onListening(m) {
      if (m?.type !== 'listening') return;
      clearTimeout(timer);
      child.off('message', onListening);
      resolve({
        pid: child.pid,
        url: m.url,
        memory: () => askMemory(child),
        stop: () => stopChild(child),
        /** Ends the process at once (SIGKILL), as a crash would; resolves when it is gone. */
        kill: () => killChild(child),
      });
    });
  });
}

function askMemory(child) {
  return new Promise((resolve) => {
    child.on('message', function onMemory(m) {
      if (m?.type !== 'memory') return;
      child.off('message', onMemory);
      resolve({ heapUsed: m.heapUsed, rss: m.rss });
    });
    child.send({ type: 'memory' });
  });
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

function killChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** CPUs the servers are pinned to (a taskset list), or null when nobody is pinned. */
let serverCpus = null;

/**
 * `--server-cpus LIST`: every server started from now on runs on LIST, and this process (the
 * generator) on the other CPUs, as a load generator on its own machine would. Returns the
 * generator's list. Needs `taskset` (util-linux).
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

/** `0,2-3` → [0, 2, 3]; every CPU must exist on this machine. */
export function parseCpuList(list, all) {
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

/** Pins every thread of `pid` to `list` (a taskset CPU list). */
function setAffinity(pid, list) {
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', list, String(pid)], { stdio: 'ignore' });
  } catch (error) {
    throw new Error(
      `could not pin process ${pid} to CPUs ${list} with taskset (util-linux): ${error.message}`,
    );
  }
}

/** This process's own user + system CPU in seconds. */
export function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** utime + stime of a process in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** utime and stime of a process apart, in seconds: { user, system }. */
export function cpuSplit(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLK_TCK, system: Number(fields[12]) / CLK_TCK };
}

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Spread as ± half the range, in percent of the median. */
export function spread(values) {
  const v = values.filter((x) => Number.isFinite(x));
  const m = median(v);
  if (v.length < 2 || !m) return 0;
  return ((Math.max(...v) - Math.min(...v)) / 2 / m) * 100;
}

export function parseFlags(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help') return { ...out, help: true };
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const key = arg.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in defaults)) throw new Error(`unknown flag ${arg}`);
    const def = defaults[key];
    if (typeof def === 'boolean') out[key] = true;
    else if (typeof def === 'number') out[key] = Number(argv[++i]);
    else out[key] = argv[++i];
  }
  return out;
}
