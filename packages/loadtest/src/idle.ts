/**
 * The `connections` scenario's machine-side figures: the kernel's TCP socket memory
 * (/proc/net/sockstat), the memory left (/proc/meminfo, for the ramp's guard), and the CPU
 * the server and the generator spent over the held window, each read from /proc/<pid>/stat
 * over its own process tree, so the two are measured apart.
 */
import { readFileSync } from 'node:fs';
import { processTreeSample } from './server-process.js';

export interface Sockstat {
  /** TCP sockets in use (both ends of every loopback connection). */
  tcpInuse: number;
  /** Memory the kernel holds for TCP sockets (buffers), bytes: `mem` pages × 4 KiB. */
  tcpMemBytes: number;
}

const PAGE = 4096;

/** The connections scenario's options (part of `LoadtestOptions`). */
export interface ConnectionsOptions {
  /** connections: sessions opened per second. */
  ramp: number;
  /** connections: ms to hold the idle sessions. */
  hold: number;
  /** connections: channels the sessions are spread over (session i on /loadtest/idle/<i mod N>; 1 = /loadtest/idle). */
  channels: number;
  /** connections: after the hold, one publish to every channel, timed until it reached every session. */
  broadcast: boolean;
  /** connections: MB of MemAvailable below which the ramp stops opening sessions (0 = off). */
  minAvailable: number;
  /** connections: ms after which the ramp stops opening sessions and the hold begins (0 = off). */
  maxRamp: number;
}

export const CONNECTIONS_DEFAULTS: ConnectionsOptions = {
  ramp: 1000,
  hold: 10_000,
  channels: 1,
  broadcast: false,
  minAvailable: 0,
  maxRamp: 0,
};

/** The connections scenario's rows of the option table (`OPTION_SPECS`). */
export const CONNECTIONS_SPECS = [
  { key: 'ramp', kind: 'int', help: 'sessions opened per second', scenarios: ['connections'] },
  { key: 'hold', kind: 'ms', help: 'how long to hold the idle sessions', scenarios: ['connections'] },
  {
    key: 'channels',
    kind: 'int',
    help: 'channels /loadtest/idle/<n>, session i on i mod N',
    scenarios: ['connections'],
  },
  {
    key: 'broadcast',
    kind: 'bool',
    help: 'after the hold, one publish to every channel, timed until every session has it (within --drain)',
    scenarios: ['connections'],
  },
  {
    key: 'minAvailable',
    kind: 'int',
    help: "stop the ramp when the machine's MemAvailable falls below this many MB (0 = off)",
    scenarios: ['connections'],
  },
  {
    key: 'maxRamp',
    kind: 'ms',
    help: 'stop the ramp after this long and hold the sessions opened so far (0 = off)',
    scenarios: ['connections'],
  },
] as const;

/** /proc/net/sockstat's TCP line, or undefined off Linux. */
export function readSockstat(text?: string): Sockstat | undefined {
  let raw = text;
  try {
    raw ??= readFileSync('/proc/net/sockstat', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^TCP: inuse (\d+) .*\bmem (\d+)/m.exec(raw);
  if (!m) return undefined;
  return { tcpInuse: Number(m[1]), tcpMemBytes: Number(m[2]) * PAGE };
}

/** MemAvailable from /proc/meminfo in bytes, or undefined off Linux. */
export function memAvailableBytes(text?: string): number | undefined {
  let raw = text;
  try {
    raw ??= readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(raw);
  return m ? Number(m[1]) * 1024 : undefined;
}

/**
 * `--min-available <MB>` and `--max-ramp <ms>`: a check for the ramp (memory read at most
 * twice a second). It names why the ramp stopped once the machine's available memory fell
 * below the floor or the ramp ran out of time, else undefined.
 */
export function rampGuard(
  minAvailableMb: number,
  maxRampMs: number,
  read = memAvailableBytes,
): () => string | undefined {
  const started = Date.now();
  let checkedAt = 0;
  let reason: string | undefined;
  return () => {
    const t = Date.now();
    if (reason !== undefined) return reason;
    if (maxRampMs > 0 && t - started >= maxRampMs) {
      reason = `ramp stopped: --max-ramp ${maxRampMs / 1000} s reached`;
    } else if (minAvailableMb > 0 && t - checkedAt >= 500) {
      checkedAt = t;
      const available = read();
      if (available !== undefined && available < minAvailableMb * 1048576) {
        reason = `ramp stopped: MemAvailable ${Math.round(available / 1048576)} MB below --min-available ${minAvailableMb} MB`;
      }
    }
    return reason;
  };
}

/** Slab memory (kernel objects: socket structs, inodes, dentries) from /proc/meminfo, bytes. */
export function slabBytes(text?: string): number | undefined {
  let raw = text;
  try {
    raw ??= readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Slab:\s+(\d+) kB/m.exec(raw);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** One reading at an edge of the held window. */
export interface WindowReading {
  at: number;
  generatorCpuSeconds: number;
  generatorRssBytes: number;
  generatorProcesses: number;
  sockstat?: Sockstat;
  slabBytes?: number;
}

/** Reads the generator (this process and its workers) and the kernel's sockets now. */
export function readWindow(): WindowReading {
  const g = processTreeSample(process.pid);
  return {
    at: Date.now(),
    generatorCpuSeconds: g.cpuSeconds ?? 0,
    generatorRssBytes: g.rssBytes ?? 0,
    generatorProcesses: g.processes,
    sockstat: readSockstat(),
    slabBytes: slabBytes(),
  };
}

/** What the held window cost, in all and per connection. */
export interface IdleFigures {
  heldSeconds: number;
  sessions: number;
  serverCpuSeconds?: number;
  /** Server CPU per held connection per second of hold, µs. */
  serverUsPerConnectionSecond?: number;
  generatorCpuSeconds: number;
  generatorUsPerConnectionSecond: number;
  generatorRssBytes: number;
  generatorProcesses: number;
  /**
   * Machine-wide, grown since before the ramp, read at the end of the hold: TCP sockets
   * (both ends of each connection), their buffer memory (/proc/net/sockstat) and the
   * kernel's slab (socket structs among others, /proc/meminfo; other work moves it too).
   */
  tcpInuse?: number;
  socketMemoryBytes?: number;
  slabBytes?: number;
  /** Server RSS (every process) + kernel socket buffer memory, per session. */
  allInBytesPerSession?: number;
  /** The same with the server's proportional set size (shared pages counted once), per session. */
  allInPssBytesPerSession?: number;
}

export interface BroadcastFigures {
  channels: number;
  expected: number;
  reached: number;
  /** From the publish to the last session reached, ms (the slowest delivery). */
  ms: number;
}

export function idleFigures(
  before: WindowReading,
  open: WindowReading,
  close: WindowReading,
  sessions: number,
  server: { open?: number; close?: number; rssBytes?: number; pssBytes?: number },
): IdleFigures {
  const heldSeconds = Math.max(0.001, (close.at - open.at) / 1000);
  const perConn = (cpu: number) =>
    Math.round(((cpu * 1e6) / Math.max(1, sessions) / heldSeconds) * 1000) / 1000;
  const generatorCpuSeconds = close.generatorCpuSeconds - open.generatorCpuSeconds;
  const f: IdleFigures = {
    heldSeconds: Math.round(heldSeconds * 10) / 10,
    sessions,
    generatorCpuSeconds: Math.round(generatorCpuSeconds * 100) / 100,
    generatorUsPerConnectionSecond: perConn(generatorCpuSeconds),
    generatorRssBytes: close.generatorRssBytes,
    generatorProcesses: close.generatorProcesses,
  };
  if (server.open !== undefined && server.close !== undefined) {
    f.serverCpuSeconds = Math.round((server.close - server.open) * 100) / 100;
    f.serverUsPerConnectionSecond = perConn(server.close - server.open);
  }
  if (close.sockstat && before.sockstat) {
    f.tcpInuse = close.sockstat.tcpInuse - before.sockstat.tcpInuse;
    f.socketMemoryBytes = Math.max(0, close.sockstat.tcpMemBytes - before.sockstat.tcpMemBytes);
    if (server.rssBytes !== undefined && sessions > 0) {
      f.allInBytesPerSession = Math.round((server.rssBytes + f.socketMemoryBytes) / sessions);
    }
    if (server.pssBytes !== undefined && sessions > 0) {
      f.allInPssBytesPerSession = Math.round((server.pssBytes + f.socketMemoryBytes) / sessions);
    }
  }
  if (close.slabBytes !== undefined && before.slabBytes !== undefined)
    f.slabBytes = close.slabBytes - before.slabBytes;
  return f;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** The report's lines for the held window and the broadcast. */
export function idleLines(idle?: IdleFigures, broadcast?: BroadcastFigures): string[] {
  const lines: string[] = [];
  if (idle) {
    const server =
      idle.serverCpuSeconds === undefined
        ? 'server cpu unknown (--server-pid)'
        : `server cpu ${idle.serverCpuSeconds.toFixed(2)} s = ${idle.serverUsPerConnectionSecond} µs/s per connection`;
    lines.push(
      `held       ${int(idle.sessions)} sessions for ${idle.heldSeconds.toFixed(1)} s: ${server}; generator cpu ` +
        `${idle.generatorCpuSeconds.toFixed(2)} s = ${idle.generatorUsPerConnectionSecond} µs/s per connection ` +
        `(${idle.generatorProcesses} processes, rss ${mb(idle.generatorRssBytes)})`,
    );
    const per = (bytes: number) => kb(bytes / Math.max(1, idle.sessions));
    if (idle.socketMemoryBytes !== undefined) {
      lines.push(
        `kernel     since the ramp: TCP sockets +${int(idle.tcpInuse ?? 0)}  socket buffers ${mb(idle.socketMemoryBytes)} ` +
          `(${per(idle.socketMemoryBytes)} per session, both ends; /proc/net/sockstat)` +
          (idle.slabBytes !== undefined
            ? `  slab ${mb(idle.slabBytes)} (${per(idle.slabBytes)} per session; machine-wide)`
            : ''),
      );
    }
    if (idle.allInBytesPerSession !== undefined) {
      lines.push(
        `all-in     server rss + kernel socket buffers = ${kb(idle.allInBytesPerSession)} per session` +
          (idle.allInPssBytesPerSession !== undefined
            ? `; with pss (shared pages once) ${kb(idle.allInPssBytesPerSession)}`
            : ''),
      );
    }
  }
  if (broadcast) {
    lines.push(
      `broadcast  one publish to each of ${int(broadcast.channels)} channels reached ${int(broadcast.reached)}/` +
        `${int(broadcast.expected)} sessions; the last ${(broadcast.ms / 1000).toFixed(3)} s after the publish`,
    );
  }
  return lines;
}
