import { describe, expect, it } from 'vitest';
import type { HistoryPolicy, StreamPosition } from '../engine.js';
import { StreamTable } from './stream-table.js';

const KEEP: HistoryPolicy = { size: 10, ttlMs: 1000 };
const LONG: HistoryPolicy = { size: 10, ttlMs: 10_000 };

function table(maxChannels = 1000, idleTtlMs = 1000): StreamTable {
  return new StreamTable({ maxChannels, idleTtlMs });
}

function publish(t: StreamTable, channel: string, now: number, policy = KEEP): StreamPosition {
  return t.publish(channel, `m${now}`, policy, now).position as StreamPosition;
}

describe('StreamTable', () => {
  it('drops a channel idle for its time-to-live at the next sweep, and only then', () => {
    const t = table();
    publish(t, '/a', 0);
    publish(t, '/b', 500);
    t.sweep(999);
    expect(t.stats()).toEqual({ channels: 2, expired: 0, evicted: 0 });
    t.sweep(1000);
    expect(t.stats()).toEqual({ channels: 1, expired: 1, evicted: 0 });
    // A publish restarts the wait.
    publish(t, '/b', 1200);
    t.sweep(1700);
    expect(t.stats().channels).toBe(1);
    t.sweep(2200);
    expect(t.stats()).toEqual({ channels: 0, expired: 2, evicted: 0 });
  });

  it('keeps a channel with a longer time-to-live while shorter ones behind it expire', () => {
    const t = table();
    publish(t, '/long', 0, LONG);
    publish(t, '/short', 100);
    t.sweep(5000);
    expect(t.stats()).toMatchObject({ channels: 1, expired: 1 });
    expect(t.read('/long', 5000).position.offset).toBe(1);
    t.sweep(10_000);
    expect(t.stats()).toMatchObject({ channels: 0, expired: 2 });
  });

  it('keeps a channel that was only read for the idle time-to-live, and its position until a publish', () => {
    const t = table(1000, 300);
    const start = t.read('/quiet', 0).position;
    expect(start.offset).toBe(0);
    t.sweep(299);
    publish(t, '/quiet', 299);
    const r = t.read('/quiet', 300).since(start, 300);
    expect(r.recovered && r.publications.map((p) => p.payload)).toEqual(['m299']);
    const other = t.read('/never', 400).position;
    t.sweep(700);
    expect(t.read('/never', 700).since(other, 700).recovered).toBe(false);
  });

  it('never holds more than maxChannels: the least recently published goes first', () => {
    const t = table(3);
    publish(t, '/a', 1);
    publish(t, '/b', 2);
    publish(t, '/c', 3);
    publish(t, '/a', 4); // /a is now the most recent: /b is the oldest
    publish(t, '/d', 5);
    expect(t.stats()).toEqual({ channels: 3, expired: 0, evicted: 1 });
    expect(t.read('/a', 6).position.offset).toBe(2);
    expect(t.stats().evicted).toBe(1);
    expect(t.read('/b', 6).position.offset).toBe(0); // made again, pushing out /c
    expect(t.stats()).toEqual({ channels: 3, expired: 0, evicted: 2 });
  });

  it('evicts the least recently published channel whatever its time-to-live', () => {
    const t = table(3);
    publish(t, '/short/a', 1);
    publish(t, '/long/a', 2, LONG);
    publish(t, '/short/b', 3);
    publish(t, '/short/a', 4);
    publish(t, '/x', 5); // pushes out /long/a, the least recently published
    expect(t.read('/short/a', 6).position.offset).toBe(2);
    expect(t.read('/short/b', 6).position.offset).toBe(1);
    expect(t.stats()).toEqual({ channels: 3, expired: 0, evicted: 1 });
    publish(t, '/long/b', 7, LONG); // then /short/b
    expect(t.read('/x', 8).position.offset).toBe(1);
    expect(t.stats().evicted).toBe(2);
  });

  it('gives a channel dropped by the cap a new epoch: a position from before is not recovered', () => {
    const t = table(1);
    const before = publish(t, '/a', 1);
    publish(t, '/b', 2);
    const again = publish(t, '/a', 3);
    expect(again.offset).toBe(1);
    expect(again.epoch).not.toBe(before.epoch);
    expect(t.read('/a', 4).since(before, 4)).toEqual({ recovered: false, position: again });
  });

  it('gives a channel dropped by the sweep a new epoch, whatever was made since', () => {
    const t = table();
    const before = publish(t, '/a', 0);
    publish(t, '/a', 1);
    t.sweep(5000);
    const fresh = t.read('/a', 5000).position;
    expect(fresh.epoch).not.toBe(before.epoch);
    // Even a position that names the old epoch at the new offsets is refused.
    expect(t.read('/a', 5000).since({ offset: 0, epoch: before.epoch }, 5000).recovered).toBe(false);
    const after = publish(t, '/a', 5001);
    expect(after).toEqual({ offset: 1, epoch: fresh.epoch });
    expect(t.read('/a', 5002).since(fresh, 5002).recovered).toBe(true);
  });

  it('stays within the cap over many distinct channels, and empties once they are idle', () => {
    const t = table(1000);
    for (let i = 0; i < 20_000; i++) {
      publish(t, `/user/${i}`, i);
      if (t.stats().channels > 1000) throw new Error(`${t.stats().channels} channels after ${i}`);
    }
    expect(t.stats()).toEqual({ channels: 1000, expired: 0, evicted: 19_000 });
    t.sweep(19_998 + 1000);
    expect(t.stats().channels).toBe(1); // the last one, published at 19_999, is not idle yet
    t.sweep(19_999 + 1000);
    expect(t.stats()).toEqual({ channels: 0, expired: 1000, evicted: 19_000 });
  });
});
