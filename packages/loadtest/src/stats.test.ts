import { describe, expect, it } from 'vitest';
import {
  DeliveryStats,
  median,
  mergeParts,
  mergeSeries,
  newHistogram,
  percentileDistribution,
  spread,
  summarize,
  summarizeRounds,
} from './stats.js';

/** HDR histograms with 3 significant digits are exact to 0.1%. */
function expectNear(actual: number, expected: number) {
  expect(Math.abs(actual - expected) / expected).toBeLessThanOrEqual(0.001);
}

describe('latency statistics', () => {
  it('reports percentiles of 1..10000 µs within the histogram precision', () => {
    const h = newHistogram();
    for (let us = 1; us <= 10_000; us++) h.recordValue(us);
    const s = summarize(h);
    expect(s.count).toBe(10_000);
    expect(s.min).toBe(0.001);
    expectNear(s.p50, 5);
    expectNear(s.p90, 9);
    expectNear(s.p99, 9.9);
    expectNear(s.p999, 9.99);
    expectNear(s.max, 10);
    expectNear(s.mean, 5.0005);
  });

  it('reports zeros for an empty histogram', () => {
    expect(summarize(newHistogram())).toMatchObject({ count: 0, p50: 0, max: 0 });
  });

  it('puts a lone outlier at p99.9 and max but not at p99', () => {
    const h = newHistogram();
    for (let i = 0; i < 999; i++) h.recordValue(1000);
    h.recordValue(500_000);
    const s = summarize(h);
    expectNear(s.p99, 1);
    expectNear(s.max, 500);
  });
});

describe('DeliveryStats', () => {
  it('counts loss and duplicates per message, not in total', () => {
    const st = new DeliveryStats(0);
    st.openWindow(0);
    st.onSend(0, 3);
    st.onSend(1, 2);
    // Message 0 arrives four times (one duplicate), message 1 once (one lost): totals match.
    for (let k = 0; k < 4; k++) st.onDeliver(0, 1, 2);
    st.onDeliver(1, 1, 2);
    const t = mergeParts([st.toPart()]);
    expect(t).toMatchObject({ sent: 2, expected: 5, received: 5, lost: 1, duplicated: 1 });
    expect(t.latency.count).toBe(5);
    expect(t.latency.p50).toBeCloseTo(1, 2);
  });

  it('leaves messages sent before the window out of latency and throughput', () => {
    const st = new DeliveryStats(0);
    st.onSend(0, 1);
    st.onDeliver(0, 10, 11);
    st.openWindow(20);
    st.onSend(1, 1);
    st.onDeliver(1, 25, 27);
    st.closeWindow();
    const t = mergeParts([st.toPart()]);
    expect(t.windowReceived).toBe(1);
    expect(t.latency.count).toBe(1);
    expect(t.latency.max).toBeCloseTo(2, 2);
  });

  it('flags a latency beyond the limit', () => {
    const st = new DeliveryStats(0);
    st.maxLatencyUs = 50_000;
    st.openWindow(0);
    st.onDeliver(0, 100, 140);
    expect(st.latencyExceeded).toBe(false);
    st.onDeliver(0, 100, 160);
    expect(st.latencyExceeded).toBe(true);
  });

  it('merges the parts of several workers by message id', () => {
    const a = new DeliveryStats(0);
    const b = new DeliveryStats(0);
    a.onSend(0, 2); // worker 0 publishes even ids
    b.onSend(1, 2); // worker 1 publishes odd ids
    a.onDeliver(0, 0, 1);
    a.onDeliver(1, 0, 1);
    b.onDeliver(0, 0, 1);
    b.onDeliver(1, 0, 1);
    expect(mergeParts([a.toPart(), b.toPart()])).toMatchObject({
      expected: 4,
      received: 4,
      lost: 0,
      duplicated: 0,
    });
  });

  it('makes one series point per tick with rates over the elapsed time', () => {
    const st = new DeliveryStats(0);
    st.openWindow(0);
    st.onSend(0, 10);
    for (let i = 0; i < 10; i++) st.onDeliver(0, 0, 3);
    const p = st.tick(500);
    expect(p).toMatchObject({ t: 0.5, sentPerSecond: 2, deliveredPerSecond: 20 });
    expect(p.p99).toBeCloseTo(3, 2);
    expect(mergeSeries([[p], [p]])[0]).toMatchObject({ deliveredPerSecond: 40, p99: p.p99 });
  });
});

describe('percentileDistribution', () => {
  it('spaces points in nines up to what the count resolves, ending with the maximum', () => {
    const h = newHistogram();
    for (let us = 1; us <= 1000; us++) h.recordValue(us * 1000);
    const d = percentileDistribution(h);
    expect(d[0]).toEqual({ percentile: 0, ms: expect.closeTo(1, 0) });
    expect(d.find((p) => p.percentile === 90)?.ms).toBeCloseTo(900, -1);
    expect(d.find((p) => p.percentile === 99)?.ms).toBeCloseTo(990, -1);
    // 1,000 samples resolve up to 99.9%: no 99.99% point, then the maximum.
    expect(d.some((p) => p.percentile > 99.9 && p.percentile < 100)).toBe(false);
    expect(d.at(-1)).toEqual({ percentile: 100, ms: expect.closeTo(1000, 0) });
    for (let i = 1; i < d.length; i++) expect(d[i]!.ms).toBeGreaterThanOrEqual(d[i - 1]!.ms);
    expect(percentileDistribution(newHistogram())).toEqual([]);
  });
});

describe('median and spread of bench rounds', () => {
  it('takes the middle value, or the mean of the middle two, of the finite values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, Number.NaN, 1, Number.POSITIVE_INFINITY])).toBe(3);
    expect(median([])).toBeNaN();
    expect(median([Number.NaN])).toBeNaN();
  });

  it('gives the spread as half the range in percent of the median, 0 for a single round', () => {
    expect(spread([90, 100, 110])).toBeCloseTo(10, 10);
    expect(spread([100, Number.NaN, 120])).toBeCloseTo((10 / 110) * 100, 10);
    expect(spread([42])).toBe(0);
    expect(spread([0, 0])).toBe(0);
  });
});

describe('a bench summary over rounds', () => {
  it('gives each row and numeric metric its median, spread and values, leaving other values out', () => {
    const summary = summarizeRounds({
      'bayou/websocket': [
        { cpuUsPerMsg: 5, lost: 0, note: 'x' },
        { cpuUsPerMsg: 7, lost: 1, note: 'y' },
        { cpuUsPerMsg: 6, lost: 0, note: 'z' },
      ],
    });
    expect(summary['bayou/websocket']?.cpuUsPerMsg).toEqual({
      median: 6,
      spread: (1 / 6) * 100,
      values: [5, 7, 6],
    });
    expect(summary['bayou/websocket']?.lost?.values).toEqual([0, 1, 0]);
    expect(summary['bayou/websocket']?.note).toEqual({ median: Number.NaN, spread: 0, values: [] });
  });
});
