import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../index.js';
import { operationsOf } from '../kernel/node-operations.js';
import { MAX_COUNTED, NodeWatch, sourcesOf, TOP } from './node-stats.js';

describe('NodeWatch', () => {
  let server: BayouServer;
  beforeAll(async () => {
    server = await createServer({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.close());

  it('counts publishes per channel only while watched, at most MAX_COUNTED channels, emptied by each read', () => {
    const ops = operationsOf(server.app);
    const taps = ops.taps;
    const watch = new NodeWatch(server.bayou, ops, sourcesOf(server.app));
    expect(taps.countingPublishes).toBe(false);
    watch.read();
    expect(taps.countingPublishes).toBe(true);
    const count = (channel: string) => taps.published(channel);
    for (let i = 0; i < 50; i++) count('/hot');
    // A flood of new names past the bound is not counted; a channel already counted still is.
    for (let i = 0; i < MAX_COUNTED + 500; i++) count(`/flood/${i}`);
    count('/hot');
    expect(watch.countedChannels).toBe(MAX_COUNTED);
    const stats = watch.read();
    expect(stats.byRate).toHaveLength(TOP);
    expect(stats.byRate[0]?.[0]).toBe('/hot');
    expect(watch.countedChannels).toBe(0);
    watch.stop();
    expect(taps.countingPublishes).toBe(false);
    expect(watch.watching).toBe(false);
  });

  it("leaves the console's own feed out of the busiest channels, and counts every transport", async () => {
    const ops = operationsOf(server.app);
    const watch = new NodeWatch(server.bayou, ops, sourcesOf(server.app));
    watch.read();
    for (let i = 0; i < 20; i++) ops.taps.published('/bayou/admin/stats');
    ops.taps.published('/news');
    const stats = watch.read();
    expect(stats.byRate.map(([c]) => c)).toEqual(['/news']);
    expect(stats.bySubscribers.some(([c]) => c.startsWith('/bayou/admin'))).toBe(false);
    expect(stats).toMatchObject({ websockets: 0, streaming: 0, eventSources: 0, longPolls: 0 });
    watch.stop();
  });
});
