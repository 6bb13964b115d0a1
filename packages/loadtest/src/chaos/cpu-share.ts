/**
 * What the machine's CPU went to during a storm run, from `/proc` (Linux; elsewhere nothing
 * is sampled): each second, the machine's busy time and the CPU of every process of the run
 * (this one and its descendants: client workers, balancer, nodes, Redis), by role. A quiet
 * window that already keeps the cores busy leaves no room for a storm's extra work, so every
 * stayer's latency rises with it whatever the server does: the storm report says how many
 * cores the quiet window left idle, and who took the rest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The run's processes by what they are, from their command line. */
export type CpuRole = 'generator' | 'publisher' | 'balancer' | 'nodes' | 'redis' | 'other';

/** Cores used over a window (1 = one core busy the whole time). */
export interface CpuWindow {
  seconds: number;
  /** The whole machine's busy cores, of `cores`. */
  machine: number;
  /** This run's processes, all of them, and by role. */
  run: number;
  byRole: Partial<Record<CpuRole, number>>;
  /** What the machine spent outside the run (other work on it). */
  others: number;
}

interface Sample {
  t: number;
  /** /proc/stat's first line: all ticks, idle ticks. */
  total: number;
  idle: number;
  /** pid → ticks used (utime + stime) by the run's processes alive then. */
  ticks: Map<number, number>;
}

const TICKS_PER_SECOND = 100;

/** The role of a process of the run from its command line (`self`: the chaos parent). */
export function roleOf(cmdline: string, self: boolean): CpuRole {
  if (self) return 'publisher';
  if (cmdline.includes('redis-server')) return 'redis';
  if (cmdline.includes('cluster-worker')) return 'generator';
  if (cmdline.includes('round-robin') || cmdline.includes('nginx')) return 'balancer';
  if (cmdline.includes(' start ')) return 'nodes';
  return 'other';
}

/** Cores used between two samples, by role (`roles`: pid → role). */
export function cpuBetween(
  a: Sample,
  b: Sample,
  roles: ReadonlyMap<number, CpuRole>,
  cores: number,
): CpuWindow {
  const seconds = (b.t - a.t) / 1000;
  const total = b.total - a.total;
  const machine = total > 0 ? ((total - (b.idle - a.idle)) / total) * cores : 0;
  const byRole: Partial<Record<CpuRole, number>> = {};
  let run = 0;
  for (const [pid, used] of b.ticks) {
    const before = a.ticks.get(pid);
    if (before === undefined || seconds <= 0) continue;
    const c = (used - before) / TICKS_PER_SECOND / seconds;
    const role = roles.get(pid) ?? 'other';
    byRole[role] = (byRole[role] ?? 0) + c;
    run += c;
  }
  return { seconds, machine, run, byRole, others: Math.max(0, machine - run) };
}

/** Samples the machine and this process's tree every `everyMs` until `stop()`. */
export class CpuShare {
  private readonly samples: Sample[] = [];
  private readonly roles = new Map<number, CpuRole>();
  private timer: NodeJS.Timeout | null = null;
  readonly cores = availableParallelism();

  /** Whether `/proc` can be read here (Linux). */
  static available(): boolean {
    try {
      readFileSync('/proc/stat', 'utf8');
      return true;
    } catch {
      return false;
    }
  }

  start(everyMs = 1000): this {
    if (!CpuShare.available()) return this;
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** How many samples were taken (for tests). */
  get taken(): number {
    return this.samples.length;
  }

  /** Cores used from `from` to `to` (Date.now() values), between the samples nearest inside; null with fewer than two. */
  window(from: number, to: number): CpuWindow | null {
    const inside = this.samples.filter((s) => s.t >= from && s.t <= to);
    const a = inside[0];
    const b = inside.at(-1);
    if (a === undefined || b === undefined || a === b) return null;
    return cpuBetween(a, b, this.roles, this.cores);
  }

  private sample(): void {
    try {
      const [total, idle] = machineTicks();
      this.samples.push({ t: Date.now(), total, idle, ticks: this.tree() });
    } catch {
      // A process that went away between two reads: the next second samples again.
    }
  }

  /** Ticks used by this process and its descendants, each named once by its role. */
  private tree(): Map<number, number> {
    const parents = new Map<number, number>();
    const ticks = new Map<number, number>();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        parents.set(pid, Number(f[1]));
        ticks.set(pid, Number(f[11]) + Number(f[12]));
      } catch {
        // Gone meanwhile.
      }
    }
    const mine = new Map<number, number>();
    for (const [pid, used] of ticks) {
      let p: number | undefined = pid;
      for (let depth = 0; p !== undefined && p > 1 && depth < 8; depth++) {
        if (p === process.pid) {
          mine.set(pid, used);
          if (!this.roles.has(pid)) this.roles.set(pid, roleOf(cmdlineOf(pid), pid === process.pid));
          break;
        }
        p = parents.get(p);
      }
    }
    return mine;
  }
}

function machineTicks(): [number, number] {
  const cpu =
    readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = cpu.reduce((a, b) => a + b, 0);
  return [total, (cpu[3] ?? 0) + (cpu[4] ?? 0)];
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}
