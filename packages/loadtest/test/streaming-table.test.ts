import { describe, expect, it } from 'vitest';
import { renderStreamingTables, targets } from '../bench/streaming-table.mjs';

const stat = (median: number) => ({ median, spread: 0, values: [median] });
/** A row's figures: saturation msg/s and CPU, the fixed rate's CPU and p99. */
const row = (msgPerSec: number, cpuUsPerMsg: number, rateCpuUsPerMsg: number, p99: number) => ({
  msgPerSec: stat(msgPerSec),
  cpuUsPerMsg: stat(cpuUsPerMsg),
  rateCpuUsPerMsg: stat(rateCpuUsPerMsg),
  p50: stat(p99 / 3),
  p99: stat(p99),
  lost: stat(0),
});

const SITTING = {
  'bayou/websocket/lean': row(90_000, 4, 5, 10),
  'bayou/long-polling/lean': row(25_000, 15, 22, 30),
  'bayou/long-polling/browser': row(20_000, 18, 28, 35),
  'bayou/streaming/lean': row(80_000, 4.5, 5.5, 12),
  'bayou/streaming/browser': row(70_000, 5, 6, 14),
  'faye/eventsource/lean': row(20_000, 12, 13, 60),
  'faye/eventsource/browser': row(18_000, 13, 14, 70),
};

/** The verdict column of the target whose text starts with `what`. */
function verdict(lines: string[], what: string): string {
  const line = lines.find((l) => l.startsWith(`| ${what}`));
  return line?.split('|').at(-2)?.trim() ?? 'missing';
}

describe('the streaming bench targets', () => {
  it('judges each target on the ratio of the rows it names', () => {
    const lines = targets(SITTING) as string[];
    expect(verdict(lines, 'CPU / msg @ rate, streaming (browser-like) ≤ 1.5× Bayou WebSocket')).toBe('PASS');
    // 6 / 28 = 0.21 ≤ 0.25, 5.5 / 22 = 0.25 ≤ 0.25
    expect(verdict(lines, 'CPU / msg @ rate, streaming ≤ 0.25× Bayou long-polling (both browser-like)')).toBe(
      'PASS',
    );
    expect(verdict(lines, 'CPU / msg @ rate, streaming ≤ 0.25× Bayou long-polling (both lean)')).toBe('PASS');
    // 80k / 25k = 3.2 ≥ 3; 70k / 20k = 3.5
    expect(verdict(lines, 'msg/s at saturation, streaming ≥ 3× Bayou long-polling (both lean)')).toBe('PASS');
    // p99 14 vs 10: +4 ms
    expect(lines.find((l) => l.includes('p99 @ rate'))).toMatch(/\+4\.0 ms .*PASS/);
  });

  it('says MISS when a ratio is past its bound and – when a row is missing', () => {
    const slow = { ...SITTING, 'bayou/streaming/browser': row(30_000, 9, 9, 20) };
    const lines = targets(slow) as string[];
    expect(verdict(lines, 'CPU / msg @ rate, streaming (browser-like) ≤ 1.5× Bayou WebSocket')).toBe('MISS');
    expect(verdict(lines, 'msg/s at saturation, streaming ≥ 3× Bayou long-polling (both browser-like)')).toBe(
      'MISS',
    );
    expect(lines.find((l) => l.includes('p99 @ rate'))).toMatch(/\+10\.0 ms .*MISS/);
    const { 'faye/eventsource/lean': _, ...noFaye } = SITTING;
    expect(
      verdict(targets(noFaye) as string[], 'CPU / msg @ rate, streaming < Faye EventSource (both lean)'),
    ).toBe('–');
  });

  it('renders every row with its load and the command beside the figures', () => {
    const md = renderStreamingTables({
      summary: SITTING,
      rows: Object.keys(SITTING),
      flags: {
        rate: 20000,
        clients: 1000,
        rooms: 100,
        roomsPerClient: 10,
        messageSize: 50,
        rounds: 3,
        outstanding: 5000,
        measure: 5000,
        warmup: 2000,
        latencyDuration: 5000,
      },
      fanOut: 100,
      seconds: 300,
      command: 'pnpm bench --only streaming',
      machine: 'Node v20, 2 CPUs',
    }) as string;
    expect(md).toContain('`pnpm bench --only streaming`');
    expect(md).toContain('fan-out 100');
    expect(md).toMatch(/\| Bayou \| HTTP streaming \| browser-like [^|]*\| 70,000 ±0% \| 3\.50× \|/);
    expect(md).toMatch(/\| Faye 1\.4 \| EventSource \| lean/);
    // The root README's rows: browser-like / lean side by side.
    expect(md).toContain('| Bayou HTTP streaming | 6.00 / 5.50 | 70k / 80k | 4.7 / 14.0 | 0 |');
    expect(md).toContain('| Bayou WebSocket | – / 5.00 | – / 90k | 3.3 / 10.0 (lean) | 0 |');
  });
});
