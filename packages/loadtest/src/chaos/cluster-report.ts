/** The cluster chaos run's text report and its self-contained HTML report. */
import { type ChartSpec, COLORS, escapeHtml, htmlPage } from '../html-report.js';
import {
  type ClusterChaosOptions,
  type ClusterChaosResult,
  clusterChaosPassed,
  type Recovery,
} from './cluster-chaos.js';
import type { CpuWindow } from './cpu-share.js';

const n = (x: number) => x.toLocaleString('en-US');
const s = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

const spreadText = (x: Recovery) => `${n(x.count)} times: p50 ${s(x.p50)}, p99 ${s(x.p99)}, max ${s(x.max)}`;

function transports(o: ClusterChaosOptions): string {
  if (o.transport !== 'mixed') return `all ${o.transport}`;
  const ws = Math.ceil(o.clients / 2);
  return `${n(ws)} WebSocket, ${n(o.clients - ws)} long-polling only`;
}

export function formatClusterChaos(o: ClusterChaosOptions, r: ClusterChaosResult): string {
  const how = o.restart === 'rolling' ? 'SIGTERM, in turn' : 'SIGKILL then restart';
  const lines = [
    o.target === ''
      ? `cluster chaos: ${o.nodes} bayou nodes on one Redis behind a round-robin balancer (no affinity; ${o.balancer === 'nginx' ? 'nginx' : 'the Node one'})`
      : `cluster chaos against ${o.target} (restarts are yours; a client's new session counts as its node going down)`,
    `  ${n(o.clients)} @bayou/client clients (${transports(o)}), ${o.rooms} rooms, ${o.roomsPerClient} per client`,
    `  a numbered stream per room through /api/publish, ${o.rate} msg/s in all for ${o.duration / 1000} s`,
    o.storm !== 'none'
      ? `  a storm instead of restarts (below), Redis restarts ${r.redisRestarts}`
      : `  node restarts ${r.nodeRestarts} (${how}, every ${o.killEvery / 1000} s), Redis restarts ${r.redisRestarts}`,
    `  published ${n(r.published)}: acknowledged ${n(r.accepted)}, refused or failed ${n(r.rejected)}`,
    `  deliveries expected ${n(r.expected)}, delivered ${n(r.delivered)}`,
    `  lost ${n(r.lost)}, duplicated ${n(r.duplicated)}, gap events ${r.gaps}, clients not connected at the end ${r.stranded}`,
    `  a client of a node gone down receiving again: ${n(r.recovery.count)} times`,
    `    after p50 ${s(r.recovery.p50)}, p99 ${s(r.recovery.p99)}, max ${s(r.recovery.max)}; never ${r.recovery.unrecovered}`,
    // Split by transport only when there are two (the workers count long-polling apart).
    ...(o.transport === 'mixed'
      ? [
          `    WebSocket ${spreadText(r.recovery.websocket)}`,
          `    long-polling ${spreadText(r.recovery.longPolling)}`,
        ]
      : []),
  ];
  if (r.storm !== null) lines.push(...stormLines(r.storm));
  if (r.unacknowledged > 0)
    lines.push(
      `  delivered though their publish was not acknowledged (neither lost nor duplicated): ${n(r.unacknowledged)}`,
    );
  for (const l of r.losses)
    lines.push(
      `  lost: client ${l.client} (${l.transport}) room ${l.room}: ${l.lost} of seq ${l.first}…${l.last}, gap events ${l.gaps}; sessions ${l.clientIds.join(' → ')}`,
    );
  if (!r.drained) lines.push('  the drain ran out before every client held every message');
  lines.push(`  ${r.seconds.toFixed(1)} s in all — ${clusterChaosPassed(r) ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}

function stormLines(st: NonNullable<ClusterChaosResult['storm']>): string[] {
  const ok = (b: boolean) => (b ? 'pass' : 'FAIL');
  const hs = st.handshakes.map((h) => `${h.t}:${h.n}`).join(' ');
  return [
    `  storm: node0 ${st.kind === 'kill' ? 'SIGKILLed' : 'drained (SIGTERM)'} at ${st.at.toFixed(1)} s, ${n(st.moved)} clients moved, the node exited after ${s(st.exitMs)}`,
    `    handshakes accepted per second (s from the signal: count) ${hs}; peak ${n(st.handshakesPeak)}/s`,
    `    every moved client receiving again after ${s(st.everyClientBackMs)}${st.kind === 'drain' ? ` (target ≤ drainSpread ${s(st.spreadMs)} + 5 s: ${ok(st.targets.longestWait)})` : ''}`,
    `    moved clients seen connected again on another node (a WebSocket reopened, or a new session): ${n(st.connectedAgain.count)}, the last after ${s(st.connectedAgain.maxMs)} (p99 ${s(st.connectedAgain.p99Ms)}), before their room's next message`,
    `    stayers' p99${st.probe ? ' (the probe worker)' : ''} ${st.stormP99} ms during the storm against ${st.quietP99} ms in the quiet 10 s before (target ≤ 2×: ${ok(st.targets.stayersP99)})`,
    ...(st.probe
      ? [
          `    every stayer, the loaded workers' too: p99 ${st.allStayers.stormP99} ms against ${st.allStayers.quietP99} ms`,
        ]
      : []),
    `    the same stayers' p99 per second (s from the signal: ms) ${st.bySecond.map((b) => `${b.t}:${b.p99}`).join(' ')}`,
    ...cpuLines(st.cpu),
    `    client workers' event-loop delay, longest second: ${st.loopDelay.loaded.storm} ms during against ${st.loopDelay.loaded.quiet} ms before${st.loopDelay.probe === null ? '' : `; the probe's ${st.loopDelay.probe.storm} ms against ${st.loopDelay.probe.quiet} ms`}`,
  ];
}

/** The cores' use, quiet window and storm: what the quiet window left idle, and who took the rest. */
function cpuLines(cpu: NonNullable<ClusterChaosResult['storm']>['cpu']): string[] {
  if (cpu === null) return [];
  const c = (x: number) => x.toFixed(2);
  const one = (name: string, w: CpuWindow | null) => {
    if (w === null) return `${name} not sampled`;
    const roles = (['generator', 'balancer', 'nodes', 'redis', 'publisher', 'other'] as const)
      .filter((r) => (w.byRole[r] ?? 0) > 0)
      .map((r) => `${r} ${c(w.byRole[r] ?? 0)}`)
      .join(', ');
    return `${name} ${c(w.machine)} busy (${c(cpu.cores - w.machine)} idle): this run ${c(w.run)} (${roles}), other work ${c(w.others)}`;
  };
  return [`    cores (of ${cpu.cores}) ${one('quiet', cpu.quiet)}; ${one('storm', cpu.storm)}`];
}

/** At most `max` points of the sorted recovery times, as percentile → seconds. */
function recoveryCurve(sorted: readonly number[], max = 200): { x: number[]; y: number[] } {
  const x: number[] = [];
  const y: number[] = [];
  if (sorted.length === 0) return { x, y };
  const step = Math.max(1, Math.floor(sorted.length / max));
  for (let i = 0; i < sorted.length; i += step) {
    x.push(Math.round((1000 * (i + 1)) / sorted.length) / 10);
    y.push((sorted[i] as number) / 1000);
  }
  x.push(100);
  y.push((sorted.at(-1) as number) / 1000);
  return { x, y };
}

export function clusterChartSpecs(r: ClusterChaosResult): ChartSpec[] {
  const xs = r.series.map((p) => p.t);
  const curve = recoveryCurve(r.recoveries);
  return [
    {
      id: 'deliveries',
      title: 'Deliveries and acknowledged publishes per second',
      xLabel: 'seconds since the stream started',
      yLabel: 'deliveries per second',
      y2Label: 'publishes per second',
      x: xs,
      series: [
        { label: 'delivered', color: COLORS.blue, values: r.series.map((p) => p.delivered) },
        { label: 'acknowledged', color: COLORS.orange, values: r.series.map((p) => p.accepted), right: true },
      ],
    },
    {
      id: 'connected',
      title: 'Clients connected (each second)',
      xLabel: 'seconds since the stream started',
      yLabel: 'clients',
      x: xs,
      series: [{ label: 'connected', color: COLORS.brown, values: r.series.map((p) => p.connected) }],
    },
    {
      id: 'recovery',
      title: `Time to receive again after its node went down (${n(r.recovery.count)} times a client of a node gone down)`,
      xLabel: 'percentile of recoveries',
      yLabel: 'seconds',
      x: curve.x,
      series: [{ label: 'seconds', color: COLORS.red, values: curve.y }],
    },
  ];
}

export function renderClusterHtml(o: ClusterChaosOptions, r: ClusterChaosResult, startedAt: string): string {
  const rows = r.events
    .map(
      (e) =>
        `<tr><td>${e.t.toFixed(1)}</td><td style="text-align:left">${escapeHtml(e.kind)}</td><td style="text-align:left">${escapeHtml(e.node)}</td><td>${(e.downMs / 1000).toFixed(2)}</td></tr>`,
    )
    .join('');
  const table = `<h2>Restarts</h2><table><tr><th>at, s</th><th>what</th><th>which</th><th>back after, s</th></tr>${rows}</table>`;
  return htmlPage({
    title: `bayou-loadtest chaos --cluster ${o.nodes} ${startedAt}`,
    heading: `bayou-loadtest chaos: ${o.nodes}-node cluster, ${o.restart === 'rolling' ? 'rolling restart' : 'node kills'}`,
    intro: `Started ${escapeHtml(startedAt)}; every process on loopback, started and stopped by the run.`,
    summary: formatClusterChaos(o, r),
    specs: clusterChartSpecs(r),
    after: table,
    options: o,
  });
}
