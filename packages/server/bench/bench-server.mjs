// @ts-check
// `bayou start` in a child process for the bandwidth benches, and what they read of it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Server flags added to every row (BAYOU_BENCH_FLAGS), and node flags (BAYOU_BENCH_NODE_ARGS, e.g. --cpu-prof). */
const EXTRA_FLAGS = (process.env.BAYOU_BENCH_FLAGS ?? '').split(' ').filter(Boolean);
const NODE_ARGS = (process.env.BAYOU_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * `bayou start` of `serverDir` in a child process.
 * @param {string} serverDir
 * @param {string[]} flags
 * @returns {Promise<{ url: string, http: string, pid: number, stop: () => void }>}
 */
export function startServer(serverDir, flags) {
  const child = spawn(
    process.execPath,
    [
      ...NODE_ARGS,
      resolve(serverDir, 'dist/cli.js'),
      'start',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--log-level',
      'warn',
      ...flags,
      ...EXTRA_FLAGS,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'BAYOU_BASELINE')),
        BAYOU_MAX_SESSIONS_PER_IP: '0',
        BAYOU_HANDSHAKE_RATE: '0',
        // The node's admission gate (1,000 handshakes/s by default) would refuse the idle flood.
        BAYOU_MAX_HANDSHAKE_RATE: '0',
        BAYOU_PUBLISH_RATE: '0',
      },
    },
  );
  return new Promise((resolveStart, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout.on('data', (d) => {
      const m = /listening on (http:\/\/\S+)/.exec(d.toString());
      if (m?.[1] && child.pid !== undefined)
        resolveStart({
          url: `${m[1].replace(/^http/, 'ws')}/bayeux`,
          http: m[1],
          pid: child.pid,
          // A profiled server exits on its own (SIGTERM) to write its profile.
          stop: () => child.kill(NODE_ARGS.length > 0 ? 'SIGTERM' : 'SIGKILL'),
        });
    });
  });
}

/** @param {number} pid CPU seconds (user + system) of the process so far. */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** @param {number} pid resident memory in bytes. */
export function rss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) * 1024;
}
