import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fullSize, writeReadmeTable } from '../bench/readme-table.mjs';

const row = (median: number, values = [median]) => ({ median, spread: 0, values });
const summary = {
  'ws-batched/websocket': {
    msgPerSec: row(300000),
    cpuUsPerMsg: row(2.5),
    rateCpuUsPerMsg: row(9),
    p99: row(3.5),
    lost: row(0),
  },
  'bayou/websocket': {
    msgPerSec: row(310000),
    cpuUsPerMsg: row(2.4),
    rateCpuUsPerMsg: row(8.8),
    p99: row(3.4),
    lost: row(0),
  },
  'bayou/idle': { heapPerSession: row(3584) },
  'bayou/long-polling/standard': { rateCpuUsPerMsg: row(30.5), lost: row(0) },
  'bayou/long-polling/lean': { msgPerSec: row(140000), rateCpuUsPerMsg: row(35), lost: row(0) },
  'faye/long-polling/standard': { rateCpuUsPerMsg: row(41), lost: row(2, [1, 0, 1]) },
};
const flags = {
  rounds: 3,
  clients: 1000,
  rate: 20000,
  idle: 10000,
  quick: false,
  servers: 'ws-batched,ws-frame,bayou,faye,socketio',
  lpServers: 'lp-floor,bayou,faye',
  lpGenerators: 'lean,standard',
};

describe('the root README comparison table', () => {
  it('replaces only what lies between the markers, one row per server measured', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'readme-')), 'README.md');
    const start = '<!-- BENCH-TABLE:START (written by packages/loadtest/bench/readme-table.mjs) -->';
    writeFileSync(file, `# Top\n\n${start}\nold table\n<!-- BENCH-TABLE:END -->\n\n## After\n`);
    expect(
      writeReadmeTable({ summary, flags, machine: 'Node v20, 2 CPUs', command: 'pnpm bench' }, file),
    ).toBe(true);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('old table');
    expect(text.startsWith('# Top\n')).toBe(true);
    expect(text.endsWith('<!-- BENCH-TABLE:END -->\n\n## After\n')).toBe(true);
    expect(text).toContain(
      '| **Bayou** | **310k** | **2.40 / 8.80** | **3.4 ms** | **3.5 KB** | **30.50 / 35.00** | **140k** | **0** |',
    );
    // Faye's lost messages are summed over its rounds; servers never measured get no row.
    expect(text).toMatch(/\| Faye 1\.4 \|.*\| 2 \|\n/);
    expect(text).not.toContain('Socket.IO');
  });

  it('refuses a file without the markers', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'readme-')), 'README.md');
    writeFileSync(file, '# No markers\n');
    expect(writeReadmeTable({ summary, flags, machine: 'm', command: 'c' }, file)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('# No markers\n');
  });

  it('counts only full-size runs as quotable', () => {
    expect(fullSize(flags)).toBe(true);
    expect(fullSize({ ...flags, quick: true })).toBe(false);
    expect(fullSize({ ...flags, rounds: 1 })).toBe(false);
    expect(fullSize({ ...flags, servers: 'bayou' })).toBe(false);
    expect(fullSize({ ...flags, lpGenerators: 'lean' })).toBe(false);
  });
});
