import { describe, expect, it } from 'vitest';
import {
  idleFigures,
  idleLines,
  memAvailableBytes,
  rampGuard,
  readSockstat,
  slabBytes,
  type WindowReading,
} from './idle.js';

const SOCKSTAT = `sockets: used 2016
TCP: inuse 2002 orphan 0 tw 15808 alloc 2002 mem 28
UDP: inuse 0 mem 0
`;
const MEMINFO = `MemTotal:       24684132 kB
MemFree:        20851072 kB
MemAvailable:   22666784 kB
Slab:             412340 kB
`;

const reading = (
  at: number,
  cpu: number,
  inuse: number,
  memPages: number,
  slabKb: number,
): WindowReading => ({
  at,
  generatorCpuSeconds: cpu,
  generatorRssBytes: 300 * 1048576,
  generatorProcesses: 3,
  sockstat: { tcpInuse: inuse, tcpMemBytes: memPages * 4096 },
  slabBytes: slabKb * 1024,
});

describe('idle figures', () => {
  it('reads the TCP line of /proc/net/sockstat and MemAvailable and Slab of /proc/meminfo', () => {
    expect(readSockstat(SOCKSTAT)).toEqual({ tcpInuse: 2002, tcpMemBytes: 28 * 4096 });
    expect(readSockstat('nothing here')).toBeUndefined();
    expect(memAvailableBytes(MEMINFO)).toBe(22666784 * 1024);
    expect(slabBytes(MEMINFO)).toBe(412340 * 1024);
    expect(memAvailableBytes('MemTotal: 1 kB')).toBeUndefined();
  });

  it('stops the ramp when memory falls below the floor, and says why, for good', () => {
    let available = 5000 * 1048576;
    const guard = rampGuard(4000, 0, () => available);
    expect(guard()).toBeUndefined();
    available = 3000 * 1048576;
    // Read at most twice a second: the same half-second still answers from the last reading.
    expect(guard()).toBeUndefined();
    const later = rampGuard(4000, 0, () => available);
    expect(later()).toBe('ramp stopped: MemAvailable 3000 MB below --min-available 4000 MB');
    available = 9000 * 1048576;
    expect(later()).toMatch(/MemAvailable 3000 MB/);
    expect(rampGuard(0, 0, () => 0)()).toBeUndefined();
  });

  it('stops the ramp once --max-ramp has passed', () => {
    expect(rampGuard(0, 1)()).toBeUndefined();
    const guard = rampGuard(0, 1);
    const until = Date.now() + 5;
    while (Date.now() < until) {
      // spin: the guard reads the wall clock
    }
    expect(guard()).toBe('ramp stopped: --max-ramp 0.001 s reached');
  });

  it('gives CPU per connection per second, server and generator apart, and kernel memory since the ramp', () => {
    const f = idleFigures(
      reading(0, 1, 10_000, 100, 400_000),
      reading(1000, 2, 30_000, 100, 400_000),
      reading(11_000, 4, 30_010, 612, 420_000),
      10_000,
      { open: 50, close: 50.5, rssBytes: 100 * 1048576, pssBytes: 60 * 1048576 },
    );
    expect(f.heldSeconds).toBe(10);
    // 0.5 s of server CPU over 10 s for 10,000 connections: 5 µs per connection per second.
    expect(f.serverUsPerConnectionSecond).toBe(5);
    expect(f.generatorCpuSeconds).toBe(2);
    expect(f.generatorUsPerConnectionSecond).toBe(20);
    expect(f.tcpInuse).toBe(20_010);
    expect(f.socketMemoryBytes).toBe(512 * 4096);
    expect(f.slabBytes).toBe(20_000 * 1024);
    expect(f.allInBytesPerSession).toBe(Math.round((100 * 1048576 + 512 * 4096) / 10_000));
    expect(f.allInPssBytesPerSession).toBe(Math.round((60 * 1048576 + 512 * 4096) / 10_000));
    const lines = idleLines(f, { channels: 10, expected: 10_000, reached: 9_999, ms: 1234.5 }).join('\n');
    expect(lines).toContain('server cpu 0.50 s = 5 µs/s per connection; generator cpu 2.00 s = 20 µs/s');
    expect(lines).toContain('TCP sockets +20,010');
    expect(lines).toContain('= 10.44 KB per session; with pss (shared pages once) 6.35 KB');
    expect(lines).toContain('each of 10 channels reached 9,999/10,000 sessions; the last 1.234 s after');
  });
});
