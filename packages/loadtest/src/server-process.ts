/**
 * A local server's memory and CPU read from /proc, summed over the process and every
 * process below it. `bayou start --workers N` is a primary and N workers: its /metrics
 * answers from whichever worker the request reached, so only the process tree gives the
 * whole server's memory (`--server-pid`).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { LoadtestError, LoadtestErrors } from './errors.js';
import type { ServerSample } from './metrics.js';

const sysconf = (name: string, fallback: number): number => {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback;
  } catch {
    return fallback;
  }
};
let units: { tick: number; page: number } | undefined;
/** Clock ticks per second and page size, read once, on first use. */
function procUnits(): { tick: number; page: number } {
  units ??= { tick: sysconf('CLK_TCK', 100), page: sysconf('PAGESIZE', 4096) };
  return units;
}

interface ProcStat {
  ppid: number;
  cpuTicks: number;
  rssPages: number;
}

/** The fields of /proc/<pid>/stat this module needs, or undefined when the process is gone. */
function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields after it start at 3.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]), rssPages: Number(f[21]) };
}

/** `pid` and every process descended from it, as pid → stat. */
export function processTree(pid: number): Map<number, ProcStat> {
  const root = readStat(pid);
  if (root === undefined) return new Map();
  const all = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p) || p <= 0) continue;
    const stat = readStat(p);
    if (stat !== undefined) all.set(p, stat);
  }
  const tree = new Map<number, ProcStat>([[pid, root]]);
  // Parents come before their children in no guaranteed order: sweep until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const [p, stat] of all) {
      if (!tree.has(p) && tree.has(stat.ppid)) {
        tree.set(p, stat);
        added = true;
      }
    }
  }
  return tree;
}

/** A process's proportional set size in bytes (/proc/<pid>/smaps_rollup), or undefined. */
function readPss(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * RSS (bytes) and CPU (user + system seconds) of `pid` and its descendants, added up.
 * Pages shared between them (the Node binary, ~40 MB a process) count once per process,
 * so the total is above what the machine spends; differences between two samples are not
 * affected. With `pss`, also their proportional set size added up (`pssBytes`): each
 * shared page split between the processes that map it, so shared pages count once (those
 * shared with processes outside the tree, another Node program, count only in part).
 * Reading it walks each process's page tables: asked once, at the end of a hold.
 */
export function processTreeSample(pid: number, pss = false): ServerSample & { processes: number } {
  const tree = processTree(pid);
  if (tree.size === 0) {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      `--server-pid ${pid}: no such process on this machine (the server must run here, and /proc be readable)`,
    );
  }
  const { tick, page } = procUnits();
  let ticks = 0;
  let pages = 0;
  for (const stat of tree.values()) {
    ticks += stat.cpuTicks;
    pages += stat.rssPages;
  }
  const sample = { cpuSeconds: ticks / tick, rssBytes: pages * page, processes: tree.size };
  if (!pss) return sample;
  let pssBytes = 0;
  for (const p of tree.keys()) pssBytes += readPss(p) ?? 0;
  return pssBytes > 0 ? { ...sample, pssBytes } : sample;
}
