/**
 * Cluster chaos at scale: the run starts a redis-server, `nodes` × `bayou start --redis`
 * and a round-robin balancer with no affinity (all on loopback), puts `clients`
 * `@bayou/client` instances (half WebSocket, half long-polling only by default) in rooms
 * behind the balancer, publishes a numbered stream per room through `POST /api/publish`,
 * and meanwhile every `killEvery` takes the next node down — SIGKILL and restart, or, in
 * `rolling` mode, SIGTERM, wait for it to be back, next — and once restarts Redis itself.
 * At the end every client must hold every acknowledged message of its rooms exactly once.
 * Everything it started is stopped by pid at the end, on an error or on a signal.
 */
import { assignGroups } from '../groups.js';
import { percentile } from '../stats.js';
import type { ChaosTransport } from './client-transports.js';
import { type BalancerKind, type ClusterBalancer, startClusterBalancer } from './cluster-balancer.js';
import type { WorkerClient, WorkerResult } from './cluster-messages.js';
import { ChaosNode, ChaosRedis, freePort, randomKey, stopAll } from './cluster-processes.js';
import { publishOne } from './cluster-publish.js';
import { ClientWorkers, probeShare } from './cluster-workers.js';
import { CpuShare } from './cpu-share.js';
import { drainSpreadOf, type StormKind, type StormReport, stormNode, stormReport } from './storm.js';

export interface ClusterChaosOptions {
  /** Nodes in the cluster. */
  nodes: number;
  clients: number;
  /** `mixed`: even clients over WebSocket, odd ones long-polling only. */
  transport: 'mixed' | ChaosTransport;
  rooms: number;
  roomsPerClient: number;
  /** Messages per second in all, spread evenly over the rooms (one numbered stream each). */
  rate: number;
  /** How long the stream runs, ms. */
  duration: number;
  /** ms between two node restarts; 0: none. */
  killEvery: number;
  /** `kill`: SIGKILL then restart; `rolling`: SIGTERM, wait for it to be back, next. */
  restart: 'kill' | 'rolling';
  /** ms into the stream at which Redis is restarted once; 0: never. */
  redisRestartAt: number;
  /** Longest wait after the stream for every client to hold every message, ms. */
  drainMs: number;
  /** Client worker processes. */
  workers: number;
  seed: number;
  prefix: string;
  /** Directory where each node's output goes (`node0.log`, …); '' keeps none. */
  logDir: string;
  /**
   * A running cluster's Bayeux endpoint (its balancer) to run against instead of starting
   * one; nothing is restarted by the run then. '' starts the cluster.
   */
  target: string;
  /** With `target`: the key of the servers' `/api/publish`. */
  apiKey: string;
  /** A storm instead of restarts: the first node SIGKILLed or drained once at `stormAt`, not restarted. */
  storm: 'none' | StormKind;
  /** ms into the stream. */
  stormAt: number;
  /**
   * With a storm: the percentage of the clients in the probe worker, whose stayers give the
   * storm's latency figures; 0: none (`storm.ts`).
   */
  probePercent: number;
  /** The balancer the run starts in front of the nodes: `node` (the default here) or `nginx`. */
  balancer?: BalancerKind;
}

/** Times to receive again after a node went down, ms. */
export interface Recovery {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ChaosEvent {
  /** Seconds since the stream started. */
  t: number;
  kind: 'SIGKILL' | 'SIGTERM' | 'redis restart';
  node: string;
  /** ms until the process answered again. */
  downMs: number;
}

export interface ClusterChaosResult {
  published: number;
  accepted: number;
  /** Publishes refused or failed (a node or Redis down): not expected anywhere. */
  rejected: number;
  expected: number;
  delivered: number;
  lost: number;
  duplicated: number;
  unacknowledged: number;
  gaps: number;
  stranded: number;
  recovery: Recovery & { unrecovered: number; websocket: Recovery; longPolling: Recovery };
  /** Every recovery time, ms, sorted (for the report's distribution). */
  recoveries: number[];
  nodeRestarts: number;
  redisRestarts: number;
  events: ChaosEvent[];
  /** One point a second: deliveries in all, clients connected, messages acknowledged. */
  series: { t: number; delivered: number; connected: number; accepted: number }[];
  losses: WorkerResult['losses'];
  slow: WorkerResult['slow'];
  /** Whether every client held every message before `drainMs` ran out. */
  drained: boolean;
  seconds: number;
  /** With `storm`: its figures. */
  storm: StormReport | null;
}

/**
 * No node goes down in the stream's last 10 s: its clients count as receiving again at
 * their first message on a new session, so the stream must still run for them.
 */
export const QUIET_END_MS = 10_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const sumOf = (counts: ReadonlyMap<number, number>) => [...counts.values()].reduce((x, y) => x + y, 0);

export function clientPlan(o: ClusterChaosOptions): WorkerClient[] {
  const groups = assignGroups(o.clients, o.rooms, o.roomsPerClient, o.seed);
  return groups.map((g, index) => ({
    index,
    transport: o.transport === 'mixed' ? (index % 2 === 0 ? 'websocket' : 'long-polling') : o.transport,
    rooms: Array.from(g),
  }));
}

/** The storm's probe percentage when the plan gives the probe clients, else 0. */
function probeOf(o: ClusterChaosOptions): number {
  const percent = o.storm === 'none' ? 0 : (o.probePercent ?? 0);
  return percent > 0 && probeShare(clientPlan(o), percent).probe.length > 0 ? percent : 0;
}

export async function runClusterChaos(o: ClusterChaosOptions): Promise<ClusterChaosResult> {
  const began = performance.now();
  const onSignal = () => {
    stopAll();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (o.target !== '') {
    try {
      const workers = new ClientWorkers(Math.max(1, Math.min(o.workers, o.clients)));
      const given = { redis: null, nodes: [], bayeux: o.target, apiKey: o.apiKey, workers };
      return await stream({ ...o, killEvery: 0, redisRestartAt: 0 }, given, began);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      stopAll();
    }
  }
  const redis = await ChaosRedis.start();
  let balancer: ClusterBalancer | null = null;
  try {
    const settings = {
      redisUrl: redis.url,
      prefix: `chaos${process.pid}:`,
      apiKey: randomKey(),
      logDir: o.logDir,
    };
    const nodes: ChaosNode[] = [];
    for (let i = 0; i < o.nodes; i++) nodes.push(new ChaosNode(`node${i}`, await freePort(), settings));
    await Promise.all(nodes.map((n) => n.start()));
    balancer = await startClusterBalancer(
      o.balancer ?? 'node',
      nodes.map((n) => n.port),
    );
    const workers = new ClientWorkers(Math.max(1, Math.min(o.workers, o.clients)), probeOf(o));
    const bayeux = `http://127.0.0.1:${balancer.port}/bayeux`;
    return await stream(o, { redis, nodes, bayeux, workers, apiKey: settings.apiKey }, began);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await balancer?.stop();
    stopAll();
    await redis.stop();
  }
}

interface Cluster {
  /** null: a cluster the run did not start. */
  redis: ChaosRedis | null;
  nodes: ChaosNode[];
  /** The balancer's Bayeux endpoint; `/api/publish` is on its origin. */
  bayeux: string;
  workers: ClientWorkers;
  apiKey: string;
}

async function stream(o: ClusterChaosOptions, c: Cluster, began: number): Promise<ClusterChaosResult> {
  const base = new URL(c.bayeux).origin;
  const ticks = new Map<number, { delivered: number; connected: number; accepted: number }>();
  // Each worker's latest count stands until its next tick: a second's point sums them all.
  const connectedNow = new Map<number, number>();
  let t0 = Date.now();
  const bucket = () => {
    const t = Math.floor((Date.now() - t0) / 1000);
    let b = ticks.get(t);
    if (b === undefined) {
      // A second that no worker ticked in (a publish acknowledged first) shows the last counts.
      b = { delivered: 0, connected: sumOf(connectedNow), accepted: 0 };
      ticks.set(t, b);
    }
    return b;
  };
  c.workers.onTick = (w, delivered, connected) => {
    const b = bucket();
    b.delivered += delivered;
    connectedNow.set(w, connected);
    b.connected = sumOf(connectedNow);
  };
  // Against a given cluster the run sends no node-down notices: a client's new session marks its loss.
  await c.workers.start(c.bayeux, o.prefix, clientPlan(o), c.nodes.length === 0);

  t0 = Date.now();
  const end = t0 + o.duration;
  // What the cores went to, quiet window and storm (`cpu-share.ts`).
  const cpu = o.storm === 'none' ? null : new CpuShare().start();
  const accepted: number[][] = Array.from({ length: o.rooms }, () => []);
  let published = 0;
  let rejected = 0;
  const publishRoom = async (room: number) => {
    const interval = (1000 * o.rooms) / Math.max(o.rate, 0.001);
    let due = performance.now() + (interval * room) / o.rooms;
    await sleep(due - performance.now());
    for (let seq = 1; Date.now() < end; seq++) {
      published++;
      if (await publishOne(base, c.apiKey, `${o.prefix}${room}`, seq)) {
        accepted[room]?.push(seq);
        bucket().accepted++;
      } else rejected++;
      due += interval;
      await sleep(Math.max(0, due - performance.now()));
    }
  };
  const events: ChaosEvent[] = [];
  let stormAt = 0;
  const [, , restarts] = await Promise.all([
    Promise.all(Array.from({ length: o.rooms }, (_, room) => publishRoom(room))),
    c.redis !== null && o.redisRestartAt > 0 && o.redisRestartAt < o.duration
      ? restartRedis(c.redis, t0 + o.redisRestartAt, t0, events)
      : null,
    o.storm !== 'none' && c.nodes[0] !== undefined
      ? stormNode(c.nodes[0], o.storm, t0 + o.stormAt, c.workers, t0, events).then((at) => {
          stormAt = at;
          return 1;
        })
      : restartNodes(o, c, t0, end, events),
  ]);

  const drained = await c.workers.complete(accepted, o.drainMs);
  cpu?.stop();
  const parts = await c.workers.finish();
  events.sort((a, b) => a.t - b.t);
  const result = summarize(parts, {
    published,
    rejected,
    accepted,
    events,
    drained,
    nodeRestarts: restarts,
    series: seriesOf(ticks),
    seconds: (performance.now() - began) / 1000,
  });
  const spread = drainSpreadOf(process.env);
  if (o.storm !== 'none' && stormAt > 0)
    result.storm = stormReport(
      parts,
      o.storm,
      stormAt,
      t0,
      result.recoveries,
      events[0]?.downMs ?? 0,
      spread,
      cpu,
    );
  return result;
}

/** The run's seconds in order, each with what was delivered, connected and accepted in it. */
function seriesOf(ticks: Map<number, { delivered: number; connected: number; accepted: number }>) {
  return [...ticks]
    .sort(([a], [b]) => a - b)
    .map(([t, b]) => ({ t, delivered: b.delivered, connected: b.connected, accepted: b.accepted }));
}

/** Takes node after node down every `killEvery` until `QUIET_END_MS` before the end; resolves with the count. */
async function restartNodes(
  o: ClusterChaosOptions,
  c: Cluster,
  t0: number,
  end: number,
  events: ChaosEvent[],
): Promise<number> {
  if (o.killEvery <= 0 || c.nodes.length === 0) return 0;
  let count = 0;
  for (let due = t0 + o.killEvery; due <= end - QUIET_END_MS; due += o.killEvery) {
    await sleep(due - Date.now());
    const node = c.nodes[count % c.nodes.length] as ChaosNode;
    const signal = o.restart === 'rolling' ? 'SIGTERM' : 'SIGKILL';
    const at = Date.now();
    // The workers mark the node's clients before the signal, so none re-handshakes unseen.
    c.workers.send({ type: 'node-down', nodeId: node.nodeId, at });
    await node.stop(signal);
    await node.start();
    events.push({ t: (at - t0) / 1000, kind: signal, node: node.name, downMs: Date.now() - at });
    count++;
  }
  return count;
}

async function restartRedis(redis: ChaosRedis, due: number, t0: number, events: ChaosEvent[]): Promise<void> {
  await sleep(due - Date.now());
  const at = Date.now();
  await redis.restart();
  events.push({ t: (at - t0) / 1000, kind: 'redis restart', node: 'redis', downMs: Date.now() - at });
}

interface RunFacts {
  published: number;
  rejected: number;
  accepted: number[][];
  events: ChaosEvent[];
  drained: boolean;
  nodeRestarts: number;
  series: ClusterChaosResult['series'];
  seconds: number;
}

function summarize(parts: readonly WorkerResult[], f: RunFacts): ClusterChaosResult {
  const sum = (
    k:
      | 'expected'
      | 'delivered'
      | 'lost'
      | 'duplicated'
      | 'unacknowledged'
      | 'gaps'
      | 'stranded'
      | 'unrecovered',
  ) => parts.reduce((n, p) => n + p[k], 0);
  const recoveries = parts.flatMap((p) => p.recoveries).sort((a, b) => a - b);
  const longPolling = parts.flatMap((p) => p.recoveriesLongPolling).sort((a, b) => a - b);
  return {
    published: f.published,
    accepted: f.accepted.reduce((n, seqs) => n + seqs.length, 0),
    rejected: f.rejected,
    expected: sum('expected'),
    delivered: sum('delivered'),
    lost: sum('lost'),
    duplicated: sum('duplicated'),
    unacknowledged: sum('unacknowledged'),
    gaps: sum('gaps'),
    stranded: sum('stranded'),
    recovery: {
      ...spread(recoveries),
      unrecovered: sum('unrecovered'),
      websocket: spread(difference(recoveries, longPolling)),
      longPolling: spread(longPolling),
    },
    recoveries,
    nodeRestarts: f.nodeRestarts,
    redisRestarts: f.events.filter((e) => e.kind === 'redis restart').length,
    events: f.events,
    series: f.series,
    losses: parts.flatMap((p) => p.losses).slice(0, 20),
    slow: parts.flatMap((p) => p.slow),
    drained: f.drained,
    seconds: f.seconds,
    storm: null,
  };
}

function spread(sorted: readonly number[]): Recovery {
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
  };
}

/** The sorted `all` without one occurrence of each value of the sorted `some`. */
function difference(all: readonly number[], some: readonly number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (const v of all) {
    if (j < some.length && some[j] === v) j++;
    else out.push(v);
  }
  return out;
}

/** Nothing lost, duplicated or told `gap`; every client connected and recovered. */
export function clusterChaosPassed(r: ClusterChaosResult): boolean {
  return (
    r.lost === 0 &&
    r.duplicated === 0 &&
    r.gaps === 0 &&
    r.stranded === 0 &&
    r.recovery.unrecovered === 0 &&
    (r.storm === null || (r.storm.targets.stayersP99 && r.storm.targets.longestWait))
  );
}
