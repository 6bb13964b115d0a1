/** Text rendering: the live progress line and the final report. */
import { idleLines } from './idle.js';
import type { RunResult } from './result.js';
import type { Progress } from './runner.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(n < 10 ? 3 : 1)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

export function progressLine(p: Progress): string {
  return (
    `[${p.elapsedSeconds.toFixed(0).padStart(4)}s] clients ${int(p.connected)}  sent ${int(p.sent)}  ` +
    `received ${int(p.received)}  ${int(p.deliveredPerSecond)} msg/s  p99 ${ms(p.p99)}`
  );
}

function messagesSection(r: RunResult): string[] {
  const m = r.messages;
  const l = r.latency;
  const lines = [
    `messages   sent ${int(m.sent)}  expected ${int(m.expected ?? 0)}  received ${int(m.received)}  ` +
      `lost ${int(m.lost ?? 0)}  duplicated ${int(m.duplicated ?? 0)}`,
    `throughput ${int(r.deliveredPerSecond)} delivered msg/s over ${r.windowSeconds.toFixed(1)} s` +
      `  (${r.deliveriesPerFrame} per frame/response)`,
  ];
  if (r.updatesPerClientPerSecond !== undefined) {
    lines.push(`feed       ${r.updatesPerClientPerSecond} updates/s per client`);
  }
  lines.push(
    `latency    min ${ms(l.min)}  p50 ${ms(l.p50)}  p90 ${ms(l.p90)}  p99 ${ms(l.p99)}  ` +
      `p99.9 ${ms(l.p999)}  max ${ms(l.max)}  (${int(l.count)} samples)`,
  );
  return lines;
}

/** feed --source demo: the record checks instead of per-message loss, which cannot be counted. */
function demoFeedSection(r: RunResult): string[] {
  const f = r.feed!;
  const snap = f.snapshots!;
  const l = r.latency;
  const whole = (n: number) => `${Math.round(n)} ms`;
  const o = r.options;
  const nominal =
    f.nominalUpdatesPerSecond !== undefined
      ? `  nominal ${int(f.nominalUpdatesPerSecond)} at --rate ${o.rate} ` +
        `(${((100 * f.updatesPerSecond) / Math.max(1, f.nominalUpdatesPerSecond)).toFixed(1)}%)`
      : "  (no nominal: pass the server's --demo-rate as --rate)";
  const lines = [
    `source     Bayou demo feed /demo/prices/<SYMBOL>, ${int(o.subjects)} symbols; ` +
      `${int(f.subscriptions)} subscriptions (${int(o.subjectsPerClient)} per client)`,
    `records    snapshots ${int(snap.received)}/${int(snap.expected)}  missing ${int(snap.missing)}  ` +
      `duplicated ${int(snap.duplicated)}  deltas ${int(f.deltas ?? 0)}  ` +
      `before snapshot ${int(f.deltasBeforeSnapshot ?? 0)}  on unsubscribed subjects ${int(f.unexpected ?? 0)}`,
    'loss       not counted: the server produces the updates, so the generator cannot know how many were due',
    `throughput ${int(f.updatesPerSecond)} updates/s over ${r.windowSeconds.toFixed(1)} s` +
      `  (${r.deliveriesPerFrame} per frame/response)${nominal}`,
    `feed       ${f.updatesPerClientPerSecond} updates/s per client, ` +
      `${f.updatesPerSubscriptionPerSecond} per subscription`,
    `latency    min ${whole(l.min)}  p50 ${whole(l.p50)}  p90 ${whole(l.p90)}  p99 ${whole(l.p99)}  ` +
      `p99.9 ${whole(l.p999)}  max ${whole(l.max)}  mean ${l.mean.toFixed(2)} ms  (${int(l.count)} samples)`,
    "           = receive time − the update's time field: ms resolution, the server's clock (same machine)",
  ];
  if (snap.missing > 0) {
    lines.push(
      `           ${int(snap.missing)} subscriptions got no snapshot: is the server started with ` +
        `--demo-feed and --demo-symbols ≥ ${o.subjects}?`,
    );
  }
  if ((f.untimed ?? 0) > 0) lines.push(`           ${int(f.untimed ?? 0)} deltas had no time field`);
  return lines;
}

function serverSection(r: RunResult): string[] {
  const s = r.server;
  if (!s) return ['server     no /metrics (not a Bayou server, or --metrics-url off)'];
  const parts: string[] = [];
  if (s.cpuSeconds !== undefined) parts.push(`cpu ${s.cpuSeconds.toFixed(2)} s in window`);
  if (s.rssBytes !== undefined) parts.push(`rss ${mb(s.rssBytes)}`);
  if (s.heapUsedBytes !== undefined) parts.push(`heap ${mb(s.heapUsedBytes)}`);
  if (s.rssPerSessionBytes !== undefined) parts.push(`rss/session ${kb(s.rssPerSessionBytes)}`);
  if (s.heapPerSessionBytes !== undefined) parts.push(`heap/session ${kb(s.heapPerSessionBytes)}`);
  if (s.memoryScope !== undefined) parts.push(`(${s.memoryScope})`);
  return [`server     ${parts.join('  ')}`];
}

export function renderReport(r: RunResult): string {
  const s = r.sessions;
  const lines = [
    `bayou-loadtest ${r.scenario} → ${r.options.url} (${r.options.transport})`,
    `sessions   ${int(s.connected)}/${int(s.requested)} connected in ${s.setupSeconds.toFixed(1)} s ` +
      `(${int(s.connectsPerSecond)}/s)  failed ${int(s.failed)}  lost during run ${int(s.lost)}` +
      (s.lostReasons ? ` (${reasonList(s.lostReasons)})` : '') +
      (s.firstError ? `  first error: ${s.firstError}` : ''),
  ];
  if (s.lostAtSeconds) lines.push(`lost at    ${lossTimeList(s.lostAtSeconds)}`);
  if (s.rampStopped) lines.push(`RAMP       ${s.rampStopped}`);
  if (r.feed?.source === 'demo') lines.push(...demoFeedSection(r));
  else if (r.scenario !== 'connections') lines.push(...messagesSection(r));
  lines.push(...serverSection(r));
  lines.push(`generator  rss ${mb(r.generator.rssBytes)}  workers ${r.generator.workers}`);
  lines.push(...idleLines(r.idle, r.broadcast));
  if (r.aborted) lines.push(`ABORTED    ${r.aborted}`);
  lines.push(r.exitCode === 0 ? 'result     OK' : `result     FAILED (exit code ${r.exitCode})`);
  return lines.join('\n');
}

/** `12.3 s, 300.1 s ×3, … (of 47; seconds since the start)`: equal times grouped, the first 12. */
function lossTimeList(at: readonly number[]): string {
  const groups: [number, number][] = [];
  for (const t of at) {
    const last = groups[groups.length - 1];
    if (last && last[0] === t) last[1]++;
    else groups.push([t, 1]);
  }
  const shown = groups.slice(0, 12).map(([t, n]) => `${t.toFixed(1)} s${n > 1 ? ` ×${n}` : ''}`);
  const more = groups.length > 12 ? ', …' : '';
  return `${shown.join(', ')}${more} (${int(at.length)} timed; seconds since the start)`;
}

/** `socket closed 1006 ×700, connect refused: 402::… ×5`, most frequent first. */
function reasonList(reasons: Record<string, number>): string {
  return Object.entries(reasons)
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${why} ×${int(n)}`)
    .join(', ');
}
