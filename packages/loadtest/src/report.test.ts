import { describe, expect, it } from 'vitest';
import { chartSpecs, escapeHtml, nines, renderHtml } from './html-report.js';
import { parsePrometheus, sampleFromMetrics } from './metrics.js';
import { resolveOptions } from './options.js';
import { progressLine, renderReport } from './report.js';
import { exitCodeOf, memoryScope, type RunResult } from './result.js';

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
    latencyDistribution: [
      { percentile: 0, ms: 0.1 },
      { percentile: 90, ms: 2 },
      { percentile: 99, ms: 3.5 },
      { percentile: 99.9, ms: 4 },
      { percentile: 100, ms: 5 },
    ],
    series: [
      { t: 1, sentPerSecond: 50, deliveredPerSecond: 500, p50: 1, p90: 2, p99: 3, max: 4, connected: 10 },
      { t: 2, sentPerSecond: 50, deliveredPerSecond: 500, p50: 1, p90: 2, p99: 3, max: 5, connected: 10 },
    ],
    serverSeries: [
      { t: 1, rssBytes: 100 * 1048576, heapUsedBytes: 20 * 1048576 },
      { t: 2, cpuPercent: 42.5, rssBytes: 101 * 1048576, heapUsedBytes: 21 * 1048576 },
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

  it('says why and when sessions were lost, equal times grouped', () => {
    const lost = result({
      sessions: {
        ...result().sessions,
        lost: 4,
        lostReasons: { 'connect refused: 402::session_unknown': 3, 'socket closed 1006': 1 },
        lostAtSeconds: [12.3, 300.1, 300.1, 301.5],
      },
    });
    const text = renderReport(lost);
    expect(text).toContain(
      'lost during run 4 (connect refused: 402::session_unknown ×3, socket closed 1006 ×1)',
    );
    expect(text).toContain('lost at    12.3 s, 300.1 s ×2, 301.5 s (4 timed; seconds since the start)');
    expect(renderReport(result())).not.toContain('lost at');
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
  it('is one self-contained file: uPlot inlined, no external script, stylesheet or URL', () => {
    const html = renderHtml(result());
    expect(html).toContain('var uPlot=');
    expect(html).not.toMatch(/<script[^>]* src=|<link|<img/);
    // The only address is uPlot's own project page in its licence comment, and the run's URL.
    const urls = [...html.matchAll(/https?:\/\/[^\s"'<)]+/g)].map((m) => m[0]);
    expect(
      urls.filter((u) => !u.startsWith('http://127.0.0.1') && u !== 'https://github.com/leeoniya/uPlot'),
    ).toEqual([]);
    for (const id of ['throughput', 'latency-over-time', 'latency-distribution', 'sessions', 'server'])
      expect(html).toContain(`id="chart-${id}"`);
  });

  it('draws the server chart only when /metrics answered, and says so otherwise', () => {
    expect(chartSpecs(result({ serverSeries: [] })).map((c) => c.id)).not.toContain('server');
    expect(renderHtml(result({ serverSeries: [] }))).toContain('no server CPU or memory chart');
    const server = chartSpecs(result()).find((c) => c.id === 'server')!;
    expect(server.series.map((s) => s.values)).toEqual([
      [null, 42.5],
      [100, 101],
      [20, 21],
    ]);
  });

  it('puts the latency distribution on a scale of nines', () => {
    expect(nines(0, 1000)).toBe(0);
    expect(nines(90, 1000)).toBe(1);
    expect(nines(99.9, 1000)).toBe(3);
    expect(nines(100, 1000)).toBe(3);
    const dist = chartSpecs(result()).find((c) => c.id === 'latency-distribution')!;
    expect(dist.x).toEqual([0, 1, 2, 3, 3]);
    expect(dist.series[0]!.values).toEqual([0.1, 2, 3.5, 4, 5]);
  });

  it('escapes text taken from the run, in the page and in the chart data', () => {
    expect(escapeHtml('<a href="x">&')).toBe('&#60;a href=&#34;x&#34;&#62;&#38;');
    const html = renderHtml(result({ options: resolveOptions({ url: 'http://h/</script><script>' }) }));
    expect(html).not.toContain('</script><script>');
  });

  it('hides header values and handshake ext values (credentials)', () => {
    const html = renderHtml(
      result({
        options: resolveOptions({ headers: ['Authorization:Bearer abc'], handshakeExt: { token: 'xyz' } }),
      }),
    );
    expect(html).not.toContain('abc');
    expect(html).not.toContain('xyz');
    expect(html).toContain('Authorization:&#60;hidden&#62;');
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

describe('memory per session', () => {
  const MB = 1048576;
  it("divides a Bayou worker's growth by the sessions it reports, not by every session", () => {
    // 600 sessions over 6 workers; /metrics answered from one holding 100 of them.
    const scope = memoryScope(
      { rssBytes: 100 * MB, sessions: 0 },
      { rssBytes: 101 * MB, sessions: 100 },
      600,
    );
    expect(scope).toEqual({
      sessions: 100,
      note: 'one server process: 100 of 600 sessions (--server-pid for all)',
    });
  });

  it('divides by every session when the figures cover the process tree or the one process holds them all', () => {
    expect(memoryScope(undefined, { rssBytes: 1, processes: 7 }, 600)).toEqual({
      sessions: 600,
      note: '7 processes, from /proc',
    });
    expect(memoryScope({ sessions: 0 }, { sessions: 600 }, 600)).toEqual({ sessions: 600 });
    // Another server's /metrics (no bayou_sessions) is taken as the whole server.
    expect(memoryScope({}, {}, 600)).toEqual({ sessions: 600 });
  });

  it('gives no figure when the scraped process gained no sessions', () => {
    expect(memoryScope({ sessions: 50 }, { sessions: 50 }, 600)).toBeUndefined();
    expect(memoryScope(undefined, { rssBytes: 1 }, 0)).toBeUndefined();
  });
});
