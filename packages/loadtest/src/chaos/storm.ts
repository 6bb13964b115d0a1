/**
 * The storm (issue #35 item 4): one node of the cluster taken down once — SIGKILLed, or
 * drained with SIGTERM (the server's paced drain) — and not started again, so its clients
 * all move to the others at once. Reported: the handshakes the cluster accepted per second
 * around it, the time until every moved client received again, and the latency p99 of the
 * clients that stayed, during the storm against the quiet 10 s before it.
 */

import { parseDuration } from '../option-values.js';
import { percentile } from '../stats.js';
import type { ToWorker, WorkerResult } from './cluster-messages.js';
import type { ChaosNode } from './cluster-processes.js';
import type { CpuShare, CpuWindow } from './cpu-share.js';

export type StormKind = 'kill' | 'drain';

/** The chaos command's flags of the storm (`chaos-cli.ts`). */
export const STORM_FLAGS = [
  {
    key: 'storm',
    flag: 'storm',
    kind: 'string',
    default: 'none',
    mode: 'cluster',
    help: 'instead of restarts, one storm: at --storm-at the first node is SIGKILLed (kill) or drained with SIGTERM (drain), and not started again',
  },
  {
    key: 'stormAt',
    flag: 'storm-at',
    kind: 'ms',
    default: '15s',
    mode: 'cluster',
    help: 'when into the stream the storm comes (at least 10 s in, for the quiet window before it)',
  },
  {
    key: 'probePercent',
    flag: 'probe',
    kind: 'number',
    default: '4',
    mode: 'cluster',
    help: "with --storm: this percentage of the clients (at least 20) held in a worker of their own, the probe, whose stayers' latency is the storm's figure (0: none, every stayer counts)",
  },
] as const;

/** The server's default `drainSpread` (ms): a drained client may wait that long plus 5 s. */
export const DRAIN_SPREAD_MS = 5000;

/** The nodes' `drainSpread` (ms): `BAYOU_DRAIN_SPREAD` as the run passes it on, else the default. */
export function drainSpreadOf(env: NodeJS.ProcessEnv): number {
  const given = env.BAYOU_DRAIN_SPREAD;
  if (given === undefined || given.trim() === '') return DRAIN_SPREAD_MS;
  return parseDuration(given);
}
/** The quiet window before the storm, ms. */
const QUIET_MS = 10_000;

export interface StormReport {
  kind: StormKind;
  /** Seconds into the stream. */
  at: number;
  /** Clients of the node taken down. */
  moved: number;
  /** ms from the signal until the node's process exited. */
  exitMs: number;
  /** Handshakes accepted by the cluster per second, from 2 s before the storm on. */
  handshakes: { t: number; n: number }[];
  handshakesPeak: number;
  /** ms from the signal until the last moved client received again (the storm's window). */
  everyClientBackMs: number;
  /**
   * The moved clients seen connected again on another node after their connection was cut
   * (WebSocket ones: reopened and their connect answered there), ms from the signal: unlike
   * receiving again, not held up by the wait for the room's next message (a message every
   * rooms ÷ rate seconds).
   */
  connectedAgain: { count: number; p99Ms: number; maxMs: number };
  /**
   * Stayers' latency p99, ms: the 10 s before, and during the storm's window — of the
   * probe's clients when the run has a probe (the target's figures), else of all.
   */
  quietP99: number;
  stormP99: number;
  /** Whether the p99s above are the probe's. */
  probe: boolean;
  /** The signal's Date.now(), to line the figures up with traces taken beside the run. */
  signalAt: number;
  /**
   * The same stayers' p99 and arrivals per second (s from the signal, quiet window on): a
   * steady rise is the path's load, a step of about 1, 3 or 7 s a connection's SYN sent again.
   */
  bySecond: { t: number; p99: number; n: number }[];
  /** The same of every stayer, in every worker (with a probe: the loaded workers' view). */
  allStayers: { quietP99: number; stormP99: number };
  /**
   * The client workers' event-loop delay, ms (the longest second of any worker): a late
   * loop delays its clients' arrival times, so a stayer's latency counts it.
   */
  loopDelay: { loaded: { quiet: number; storm: number }; probe: { quiet: number; storm: number } | null };
  /**
   * The cores' use (`cpu-share.ts`, Linux): the machine, this run by role and other work, in
   * the quiet window and during the storm; null where `/proc` is not read.
   */
  cpu: { cores: number; quiet: CpuWindow | null; storm: CpuWindow | null } | null;
  /** The nodes' drainSpread, ms (the wait target is it plus 5 s). */
  spreadMs: number;
  /** Pass/fail: stayers' p99 ≤ 2× quiet; with a drain, no client waits past drainSpread + 5 s. */
  targets: { stayersP99: boolean; longestWait: boolean };
}

/** Takes `node` down at `due` (no restart), noting the event; resolves with the time of the signal. */
export async function stormNode(
  node: ChaosNode,
  kind: StormKind,
  due: number,
  workers: { send(m: ToWorker): void },
  t0: number,
  events: { push(e: { t: number; kind: 'SIGKILL' | 'SIGTERM'; node: string; downMs: number }): unknown },
): Promise<number> {
  await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  const at = Date.now();
  // The workers mark the node's clients before the signal: those are the moved ones.
  workers.send({ type: 'node-down', nodeId: node.nodeId, at });
  const signal = kind === 'kill' ? 'SIGKILL' : 'SIGTERM';
  await node.stop(signal);
  // downMs: how long the node took to exit (a drain: its window, then closing).
  events.push({ t: (at - t0) / 1000, kind: signal, node: node.name, downMs: Date.now() - at });
  return at;
}

/**
 * Whether a message that a moved client received (published at `t`) shows it receiving again:
 * on a new session (a handshake elsewhere), or on its own session handed over to another node
 * at a drain (server #35) with a message published after `since` — the signal, or the last
 * cut of its connection after it. Not merely after the signal: a paced drain hands a session
 * over up to `drainSpread` later and its node serves it until then (counting those ended the
 * storm's window after 7.6 s of a 20 s drain); the worker takes such a "back" again when a
 * later cut comes.
 */
export function receivingAgain(id: string | null, lost: string, since: number, t: unknown): boolean {
  if (id === null) return false;
  return id !== lost || (typeof t === 'number' && t > since);
}

function p99(counts: Map<number, number>): number {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  let seen = 0;
  for (const ms of [...counts.keys()].sort((a, b) => a - b)) {
    seen += counts.get(ms) as number;
    if (seen >= total * 0.99) return ms;
  }
  return 0;
}

/** How many moved clients were seen connected again, and the p99 and longest time to it. */
function connectedAgainOf(parts: readonly WorkerResult[]): StormReport['connectedAgain'] {
  const all = parts.flatMap((p) => p.reconnections).sort((a, b) => a - b);
  return { count: all.length, p99Ms: percentile(all, 0.99), maxMs: all.at(-1) ?? 0 };
}

/** The stayers' p99 and arrivals per second from the signal at `at`, the quiet window to `back` ms after it. */
function stayersBySecond(
  of: readonly WorkerResult[],
  at: number,
  back: number,
): { t: number; p99: number; n: number }[] {
  const seconds = new Map<number, Map<number, number>>();
  for (const p of of) {
    for (const [tenth, ms, n] of p.stayerLatency) {
      const s = Math.floor((tenth * 100 - at) / 1000);
      if (s < -QUIET_MS / 1000 || s * 1000 > back) continue;
      const counts = seconds.get(s) ?? new Map<number, number>();
      seconds.set(s, counts);
      counts.set(ms, (counts.get(ms) ?? 0) + n);
    }
  }
  return [...seconds]
    .sort(([a], [b]) => a - b)
    .map(([t, counts]) => ({ t, p99: p99(counts), n: [...counts.values()].reduce((a, b) => a + b, 0) }));
}

/** The storm's figures from the workers' results; `at` is the signal's Date.now(). */
export function stormReport(
  parts: readonly WorkerResult[],
  kind: StormKind,
  at: number,
  t0: number,
  recoveries: readonly number[],
  exitMs: number,
  spreadMs = DRAIN_SPREAD_MS,
  cpu: CpuShare | null = null,
): StormReport {
  const back = Math.max(1000, recoveries.at(-1) ?? 0);
  const windows = (of: readonly WorkerResult[]) => {
    const quiet = new Map<number, number>();
    const storm = new Map<number, number>();
    for (const p of of) {
      for (const [tenth, ms, n] of p.stayerLatency) {
        const t = tenth * 100;
        const into = t >= at - QUIET_MS && t < at ? quiet : t >= at && t <= at + back ? storm : null;
        into?.set(ms, (into.get(ms) ?? 0) + n);
      }
    }
    return { quietP99: p99(quiet), stormP99: p99(storm) };
  };
  const probes = parts.filter((p) => p.probe);
  const loaded = parts.filter((p) => !p.probe);
  const all = windows(parts);
  const bySecond = stayersBySecond(probes.length > 0 ? probes : parts, at, back);
  const { quietP99, stormP99 } = probes.length > 0 ? windows(probes) : all;
  const delay = (of: readonly WorkerResult[]) => {
    const longest = (from: number, to: number) =>
      Math.max(
        0,
        ...of.flatMap((p) =>
          (p.loopDelay ?? []).filter(([s]) => s * 1000 >= from && s * 1000 < to).map(([, ms]) => ms),
        ),
      );
    return { quiet: longest(at - QUIET_MS, at), storm: longest(at, at + back + 1000) };
  };
  const perSecond = new Map<number, number>();
  for (const p of parts) {
    for (const [tenth, n] of p.handshakes) {
      const s = Math.floor((tenth * 100 - at) / 1000);
      if (s >= -2) perSecond.set(s, (perSecond.get(s) ?? 0) + n);
    }
  }
  const handshakes = [...perSecond].sort(([a], [b]) => a - b).map(([s, n]) => ({ t: s, n }));
  return {
    kind,
    at: (at - t0) / 1000,
    moved: recoveries.length,
    exitMs,
    handshakes,
    handshakesPeak: Math.max(0, ...handshakes.filter((h) => h.t >= 0).map((h) => h.n)),
    everyClientBackMs: recoveries.at(-1) ?? 0,
    connectedAgain: connectedAgainOf(parts),
    quietP99,
    stormP99,
    probe: probes.length > 0,
    signalAt: at,
    bySecond,
    allStayers: all,
    loopDelay: { loaded: delay(loaded), probe: probes.length > 0 ? delay(probes) : null },
    cpu:
      cpu === null || cpu.taken === 0
        ? null
        : { cores: cpu.cores, quiet: cpu.window(at - QUIET_MS, at), storm: cpu.window(at, at + back) },
    spreadMs,
    targets: {
      stayersP99: stormP99 <= 2 * Math.max(quietP99, 1),
      longestWait: kind === 'kill' || (recoveries.at(-1) ?? 0) <= spreadMs + 5000,
    },
  };
}
