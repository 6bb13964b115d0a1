/** Text rendering: the live progress line and the final report. */
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
    `messages   sent ${int(m.sent)}  expected ${int(m.expected)}  received ${int(m.received)}  ` +
      `lost ${int(m.lost)}  duplicated ${int(m.duplicated)}`,
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

function serverSection(r: RunResult): string[] {
  const s = r.server;
  if (!s) return ['server     no /metrics (not a Bayou server, or --metrics-url off)'];
  const parts: string[] = [];
  if (s.cpuSeconds !== undefined) parts.push(`cpu ${s.cpuSeconds.toFixed(2)} s in window`);
  if (s.rssBytes !== undefined) parts.push(`rss ${mb(s.rssBytes)}`);
  if (s.heapUsedBytes !== undefined) parts.push(`heap ${mb(s.heapUsedBytes)}`);
  if (s.rssPerSessionBytes !== undefined) parts.push(`rss/session ${kb(s.rssPerSessionBytes)}`);
  if (s.heapPerSessionBytes !== undefined) parts.push(`heap/session ${kb(s.heapPerSessionBytes)}`);
  return [`server     ${parts.join('  ')}`];
}

export function renderReport(r: RunResult): string {
  const s = r.sessions;
  const lines = [
    `bayou-loadtest ${r.scenario} → ${r.options.url} (${r.options.transport})`,
    `sessions   ${int(s.connected)}/${int(s.requested)} connected in ${s.setupSeconds.toFixed(1)} s ` +
      `(${int(s.connectsPerSecond)}/s)  failed ${int(s.failed)}  lost during run ${int(s.lost)}` +
      (s.firstError ? `  first error: ${s.firstError}` : ''),
  ];
  if (r.scenario !== 'connections') lines.push(...messagesSection(r));
  lines.push(...serverSection(r));
  lines.push(`generator  rss ${mb(r.generator.rssBytes)}  workers ${r.generator.workers}`);
  if (r.aborted) lines.push(`ABORTED    ${r.aborted}`);
  lines.push(r.exitCode === 0 ? 'result     OK' : `result     FAILED (exit code ${r.exitCode})`);
  return lines.join('\n');
}
