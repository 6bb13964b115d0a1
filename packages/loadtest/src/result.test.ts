import { describe, expect, it } from 'vitest';
import { serverFigures } from './result.js';

const MB = 1024 * 1024;

describe('serverFigures', () => {
  it("divides one worker's growth by that worker's own sessions, and says so", () => {
    const f = serverFigures(
      {
        before: { rssBytes: 100 * MB, heapUsedBytes: 20 * MB, sessions: 0, cpuSeconds: 1 },
        open: { rssBytes: 102 * MB, heapUsedBytes: 21 * MB, sessions: 100, cpuSeconds: 2 },
        close: { rssBytes: 104 * MB, heapUsedBytes: 22 * MB, sessions: 100, cpuSeconds: 3.5 },
      },
      400,
    );
    expect(f?.rssPerSessionBytes).toBe(Math.round((4 * MB) / 100));
    expect(f?.heapPerSessionBytes).toBe(Math.round((2 * MB) / 100));
    expect(f?.memoryScope).toBe('one server process: 100 of 400 sessions (--server-pid for all)');
    expect(f?.cpuSeconds).toBe(1.5);
  });

  it('divides a process tree from /proc by every session', () => {
    const f = serverFigures(
      { before: { rssBytes: 300 * MB, processes: 3 }, close: { rssBytes: 304 * MB, processes: 3 } },
      400,
    );
    expect(f?.rssPerSessionBytes).toBe(Math.round((4 * MB) / 400));
    expect(f?.memoryScope).toBe('3 processes, from /proc');
  });

  it('gives no per-session figure for a shrinking process (a GC, or another process answered)', () => {
    const f = serverFigures({ before: { rssBytes: 300 * MB }, close: { rssBytes: 200 * MB } }, 400);
    expect(f?.rssBytes).toBe(200 * MB);
    expect(f?.rssPerSessionBytes).toBeUndefined();
  });
});
