import { describe, expect, it } from 'vitest';
import { escapeHtml, lineChart, niceMax, renderHtml } from './html-report.js';
import { parsePrometheus, sampleFromMetrics } from './metrics.js';
import { resolveOptions } from './options.js';
import { progressLine, renderReport } from './report.js';
import { exitCodeOf, type RunResult } from './result.js';

function result(over: Partial<RunResult> = {}): RunResult {
  return {
    scenario: 'chat',
    options: resolveOptions({ url: 'http://127.0.0.1:9/bayeux' }),
    startedAt: '2026-01-01T00:00:00.000Z',
    sessions: { requested: 10, connected: 10, failed: 0, lost: 0, setupSeconds: 0.5, connectsPerSecond: 20 },
    messages: { sent: 100, expected: 1000, received: 1000, lost: 0, duplicated: 0 },
    deliveredPerSecond: 12345,
    deliveredInWindow: 24690,
    deliveriesPerFrame: 2.5,
    windowSeconds: 2,
    latency: { count: 1000, min: 0.1, mean: 1, p50: 1.25, p90: 2, p99: 3.5, p999: 4, max: 5 },
    series: [
      { t: 1, sentPerSecond: 50, deliveredPerSecond: 500, p50: 1, p90: 2, p99: 3, max: 4 },
      { t: 2, sentPerSecond: 50, deliveredPerSecond: 500, p50: 1, p90: 2, p99: 3, max: 5 },
    ],
    server: { cpuSeconds: 1.5, rssBytes: 100 * 1048576, heapUsedBytes: 20 * 1048576 },
    generator: { rssBytes: 50 * 1048576, workers: 1 },
    exitCode: 0,
    ...over,
  };
}

describe('text report', () => {
  it('shows counts, throughput, every percentile and the server figures', () => {
    const text = renderReport(result());
    expect(text).toContain('sent 100  expected 1,000  received 1,000  lost 0  duplicated 0');
    expect(text).toContain('12,345 delivered msg/s over 2.0 s  (2.5 per frame/response)');
    expect(text).toMatch(
      /min 0\.100 ms {2}p50 1\.250 ms {2}p90 2\.000 ms {2}p99 3\.500 ms {2}p99\.9 4\.000 ms {2}max 5\.000 ms/,
    );
    expect(text).toContain('cpu 1.50 s');
    expect(text).toContain('rss 100.0 MB');
    expect(text).toContain('result     OK');
  });

  it('says FAILED with the exit code, and ABORTED with the reason', () => {
    const text = renderReport(result({ exitCode: 3, aborted: 'latency above --max-latency 5ms' }));
    expect(text).toContain('ABORTED    latency above --max-latency 5ms');
    expect(text).toContain('FAILED (exit code 3)');
  });

  it('says so when the server has no /metrics', () => {
    expect(renderReport(result({ server: undefined }))).toContain('no /metrics');
  });

  it('renders the progress line', () => {
    expect(
      progressLine({
        elapsedSeconds: 3,
        connected: 1000,
        sent: 10,
        received: 990,
        deliveredPerSecond: 330,
        p99: 2.5,
      }),
    ).toBe('[   3s] clients 1,000  sent 10  received 990  330 msg/s  p99 2.500 ms');
  });
});

describe('exit code', () => {
  it('is 0 for a clean run, 1 for loss, duplicates or failed sessions, 3 when aborted', () => {
    const clean = result();
    expect(exitCodeOf(clean)).toBe(0);
    expect(exitCodeOf({ ...clean, messages: { ...clean.messages, lost: 1 } })).toBe(1);
    expect(exitCodeOf({ ...clean, messages: { ...clean.messages, duplicated: 2 } })).toBe(1);
    expect(exitCodeOf({ ...clean, sessions: { ...clean.sessions, failed: 1 } })).toBe(1);
    expect(exitCodeOf({ ...clean, aborted: 'x' })).toBe(3);
  });
});

describe('feed --source demo report', () => {
  const demo = (over: Partial<NonNullable<RunResult['feed']>> = {}) =>
    result({
      scenario: 'feed',
      options: resolveOptions({ url: 'http://127.0.0.1:9/bayeux', source: 'demo', rate: 10, subjects: 50 }),
      messages: { sent: 0, expected: null, received: 4100, lost: null, duplicated: null },
      deliveredPerSecond: 1950,
      latency: {
        count: 3900,
        min: 0.001,
        mean: 0.6,
        p50: 1.007,
        p90: 1.007,
        p99: 2.001,
        p999: 3.003,
        max: 7.007,
      },
      feed: {
        source: 'demo',
        subscriptions: 100,
        updatesPerSecond: 1950,
        updatesPerClientPerSecond: 97.5,
        updatesPerSubscriptionPerSecond: 19.5,
        nominalUpdatesPerSecond: 1000,
        lossCounted: false,
        snapshots: { expected: 100, received: 100, missing: 0, duplicated: 0 },
        deltas: 4000,
        deltasBeforeSnapshot: 0,
        unexpected: 0,
        untimed: 0,
        ...over,
      },
    });

  it('shows snapshots, deltas, updates/s against the nominal rate, whole-ms latency, and no loss claim', () => {
    const text = renderReport(demo());
    expect(text).toContain('snapshots 100/100  missing 0  duplicated 0  deltas 4,000');
    expect(text).toContain('loss       not counted');
    expect(text).not.toMatch(/lost \d/);
    expect(text).toContain('1,950 updates/s over 2.0 s');
    expect(text).toContain('nominal 1,000 at --rate 10 (195.0%)');
    expect(text).toContain('97.5 updates/s per client, 19.5 per subscription');
    expect(text).toMatch(/min 0 ms {2}p50 1 ms {2}p90 1 ms {2}p99 2 ms {2}p99\.9 3 ms {2}max 7 ms/);
  });

  it('fails the run on a missing or repeated snapshot, an early delta or a foreign subject', () => {
    const ok = demo();
    expect(exitCodeOf(ok)).toBe(0);
    const snapshots = ok.feed!.snapshots!;
    expect(exitCodeOf(demo({ snapshots: { ...snapshots, received: 99, missing: 1 } }))).toBe(1);
    expect(exitCodeOf(demo({ snapshots: { ...snapshots, duplicated: 1 } }))).toBe(1);
    expect(exitCodeOf(demo({ deltasBeforeSnapshot: 1 }))).toBe(1);
    expect(exitCodeOf(demo({ unexpected: 1 }))).toBe(1);
    const missing = renderReport(demo({ snapshots: { ...snapshots, received: 90, missing: 10 } }));
    expect(missing).toContain('10 subscriptions got no snapshot');
  });
});

describe('html report', () => {
  it('is one self-contained file with two inline SVG charts and no external resource', () => {
    const html = renderHtml(result());
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('Throughput');
    expect(html).toContain('Latency percentiles');
    expect(html).not.toMatch(/<script|<link|src="http/);
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|www\.w3\.org)/);
  });

  it('escapes text taken from the run', () => {
    expect(escapeHtml('<a href="x">&')).toBe('&#60;a href=&#34;x&#34;&#62;&#38;');
    const html = renderHtml(result({ options: resolveOptions({ url: 'http://h/<script>' }) }));
    expect(html).not.toContain('<script>');
  });

  it('scales charts to a round maximum and draws one path per line', () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(3)).toBe(5);
    expect(niceMax(120_000)).toBe(200_000);
    const svg = lineChart(
      'T',
      'u',
      [0, 1, 2],
      [
        { label: 'a', color: '#000', values: [0, 5, 10] },
        { label: 'b', color: '#f00', values: [1, 1, 1] },
      ],
    );
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('M64.0,208.0');
  });
});

describe('metrics', () => {
  it('parses Prometheus text, summing labelled samples', () => {
    const text = [
      '# HELP process_cpu_seconds_total x',
      'process_cpu_seconds_total 12.5',
      'process_resident_memory_bytes 1048576',
      'bayou_connections{transport="websocket"} 3',
      'bayou_connections{transport="long-polling"} 4',
      'nodejs_heap_size_used_bytes 2e6',
    ].join('\n');
    const m = parsePrometheus(text);
    expect(m.get('bayou_connections')).toBe(7);
    expect(sampleFromMetrics(m)).toMatchObject({ cpuSeconds: 12.5, rssBytes: 1048576, heapUsedBytes: 2e6 });
  });
});
