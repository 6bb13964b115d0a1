import { DEMO_PRICES_PREFIX } from '@bayou/protocol';
import { demoSymbol as serverDemoSymbol } from '@bayou/server';
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../options.js';
import { DeliveryStats } from '../stats.js';
import { DemoFeedTracker, demoSymbol, demoSymbolIndex } from './demo-feed.js';

describe('demo symbols', () => {
  it('names index i with three letters base 26, as the server does', () => {
    expect(demoSymbol(0)).toBe('AAA');
    expect(demoSymbol(1)).toBe('AAB');
    expect(demoSymbol(26)).toBe('ABA');
    expect(demoSymbol(17_575)).toBe('ZZZ');
    for (const i of [0, 1, 25, 26, 675, 676, 1999, 17_575]) expect(demoSymbol(i)).toBe(serverDemoSymbol(i));
  });

  it('reads the index back from a subject, -1 for anything else', () => {
    for (const i of [0, 1, 51, 676, 17_575])
      expect(demoSymbolIndex(DEMO_PRICES_PREFIX + demoSymbol(i))).toBe(i);
    expect(demoSymbolIndex('/demo/prices/AA')).toBe(-1);
    expect(demoSymbolIndex('/demo/prices/aaa')).toBe(-1);
    expect(demoSymbolIndex('/feed/AAA/x')).toBe(-1);
  });
});

describe('DemoFeedTracker', () => {
  const options = resolveOptions({ source: 'demo', clients: 4, subjects: 20, subjectsPerClient: 3, seed: 7 });
  const slice = { lo: 2, hi: 4, worker: 1, workers: 2 };

  function setup() {
    const stats = new DeliveryStats();
    stats.openWindow(0);
    const t = new DemoFeedTracker(options, slice, stats);
    t.markSubscribed(2);
    t.markSubscribed(3);
    return { stats, t };
  }

  it('gives each client of its slice distinct subjects out of --subjects', () => {
    const { t } = setup();
    for (const i of [2, 3]) {
      const channels = t.channelsOf(i);
      expect(channels).toHaveLength(3);
      expect(new Set(channels).size).toBe(3);
      for (const c of channels) expect(demoSymbolIndex(c)).toBeLessThan(20);
    }
  });

  it('counts snapshots and deltas apart, with latency from the time field', () => {
    const { stats, t } = setup();
    const [a, b, c] = t.channelsOf(2);
    const now = Date.now();
    t.onRecord(2, a!, { bid: 1, time: now - 100 }, 's');
    t.onRecord(2, a!, { bid: 2, time: now - 5 }, 'd');
    t.onRecord(2, b!, { bid: 1, time: now }, 's');
    t.onRecord(2, c!, { bid: 1, time: now }, 's');
    expect(t.missingSnapshots()).toBe(3); // client 3 has none yet
    for (const ch of t.channelsOf(3)) t.onRecord(3, ch, { time: now }, 's');
    const part = t.toPart();
    expect(part).toMatchObject({
      subscriptions: 6,
      snapshots: 6,
      duplicateSnapshots: 0,
      missingSnapshots: 0,
      deltas: 1,
      deltasBeforeSnapshot: 0,
      unexpected: 0,
    });
    // Snapshots are received messages but not updates: no latency, not in the window's count.
    expect(stats.received).toBe(7);
    expect(stats.windowReceived).toBe(1);
    expect(stats.histogram.totalCount).toBe(1);
    expect(stats.histogram.maxValue).toBeGreaterThanOrEqual(5000);
  });

  it('flags repeated snapshots, deltas before the snapshot and foreign subjects', () => {
    const { t } = setup();
    const [a, b] = t.channelsOf(3);
    t.onRecord(3, a!, { time: 1 }, 'd');
    t.onRecord(3, a!, { time: 1 }, 's');
    t.onRecord(3, a!, { time: 1 }, 's');
    const foreign = [0, 1, 2, 3, 4, 5]
      .map((i) => DEMO_PRICES_PREFIX + demoSymbol(i))
      .find((ch) => !t.channelsOf(3).includes(ch));
    t.onRecord(3, foreign!, { time: 1 }, 's');
    t.onRecord(3, '/chat/1', { i: 1, t: 1 }, undefined);
    t.onRecord(3, b!, { bid: 1 }, 's');
    t.onRecord(3, b!, { bid: 2 }, 'd');
    expect(t.toPart()).toMatchObject({
      snapshots: 2,
      duplicateSnapshots: 1,
      deltas: 2,
      deltasBeforeSnapshot: 1,
      unexpected: 2,
      untimed: 1,
    });
  });

  it("times a delta without time by the subject's image: time left out is time unchanged", () => {
    const { t, stats } = setup();
    const [a] = t.channelsOf(3);
    t.onRecord(3, a!, { bid: 1, time: Date.now() - 5000 }, 's');
    t.onRecord(3, a!, { bid: 2 }, 'd');
    expect(t.toPart()).toMatchObject({ deltas: 1, untimed: 0 });
    expect(stats.histogram.totalCount).toBe(1);
    expect(stats.histogram.maxValue).toBeGreaterThanOrEqual(5000);
  });

  it('takes the first untagged message of a subject as its snapshot (a server that does not tag)', () => {
    const { t } = setup();
    const [a] = t.channelsOf(2);
    t.onRecord(2, a!, { time: 1 }, undefined);
    t.onRecord(2, a!, { time: 2 }, undefined);
    expect(t.toPart()).toMatchObject({
      snapshots: 1,
      duplicateSnapshots: 0,
      deltas: 1,
      deltasBeforeSnapshot: 0,
    });
  });

  it('does not count clients whose subscribe never completed as missing snapshots', () => {
    const stats = new DeliveryStats();
    const t = new DemoFeedTracker(options, slice, stats);
    t.markSubscribed(3);
    expect(t.missingSnapshots()).toBe(3);
    expect(t.toPart().subscriptions).toBe(3);
  });
});
