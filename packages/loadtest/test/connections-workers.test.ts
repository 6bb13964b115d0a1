/**
 * The connections scenario against `bayou start --workers 2 --redis`: the server's /metrics
 * answers from one worker, so memory per session is that worker's growth over that worker's
 * sessions (never its growth over every session, which printed "-0.0 KB"), and with
 * `--server-pid` it is the whole process tree's growth over every session.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer, redisServerPath } from '../../server/test/redis-server.js';
import { runScenario } from '../src/runner.js';
import { processTree } from '../src/server-process.js';

const cli = resolve(import.meta.dirname, '../../server/dist/cli.js');
const ci = process.env.CI === 'true' || process.env.CI === '1';
const haveRedis = redisServerPath() !== null;

let redis: RedisServer;
let primary: ChildProcess;
let url: string;

/** Starts `bayou start --workers 2` and resolves with its endpoint once both workers listen. */
function startCluster(redisUrl: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BAYOU_')) env[k] = v;
  primary = spawn(
    process.execPath,
    [cli, 'start', '--host', '127.0.0.1', '--port', '0', '--workers', '2', '--redis', redisUrl],
    { env: { ...env, BAYOU_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Bayou listening on (http:\/\/\S+) .*with 2 workers/.exec(out);
      if (m) resolve(`${m[1]}/bayeux`);
    };
    primary.stdout?.on('data', onData);
    primary.stderr?.on('data', onData);
    primary.once('exit', (code) => reject(new Error(`bayou start exited with ${code}: ${out}`)));
  });
}

describe.runIf(haveRedis || ci)('connections scenario against a server with --workers', () => {
  beforeAll(async () => {
    redis = await RedisServer.start();
    url = await startCluster(redis.url);
  }, 30_000);

  afterAll(async () => {
    if (primary?.pid !== undefined && primary.exitCode === null) {
      const exited = new Promise((r) => primary.once('exit', r));
      primary.kill('SIGTERM');
      await exited;
    }
    await redis?.stop();
  });

  it("divides one worker's memory growth by that worker's sessions, and says so", async () => {
    const r = await runScenario('connections', { url, clients: 400, ramp: 2000, hold: 300, progress: false });
    expect(r.sessions.connected).toBe(400);
    const server = r.server!;
    // Round-robin spreads the sessions: the worker that answered /metrics holds a share.
    const share = /one server process: (\d+) of 400 sessions/.exec(server.memoryScope ?? '');
    expect(share).not.toBeNull();
    expect(Number(share![1])).toBeGreaterThan(0);
    expect(Number(share![1])).toBeLessThan(400);
    // How the growth is divided by that share is src/result.test.ts's; here, that the
    // window's CPU was read (the hold is idle: it may round to zero).
    expect(Number.isFinite(server.cpuSeconds), `cpuSeconds ${server.cpuSeconds}`).toBe(true);
    expect(server.processes).toBeUndefined();
  }, 30_000);

  it('with --server-pid adds up the primary and both workers from /proc over every session', async () => {
    const pid = primary.pid!;
    expect(processTree(pid).size).toBe(3);
    const r = await runScenario('connections', {
      url,
      clients: 400,
      ramp: 2000,
      hold: 300,
      progress: false,
      serverPid: pid,
    });
    expect(r.sessions.connected).toBe(400);
    const server = r.server!;
    expect(server.processes).toBe(3);
    expect(server.memoryScope).toBe('3 processes, from /proc');
    // Three Node processes hold well over 100 MB between them.
    expect(server.rssBytes).toBeGreaterThan(100 * 1024 * 1024);
    // Read from /proc for the three processes (the idle hold may round to zero ticks).
    expect(Number.isFinite(server.cpuSeconds), `cpuSeconds ${server.cpuSeconds}`).toBe(true);
    // The heap is per process: not reported for a tree.
    expect(server.heapUsedBytes).toBeUndefined();
  }, 30_000);

  it('refuses a --server-pid that is not a process here, naming the flag', async () => {
    await expect(runScenario('connections', { url, clients: 1, serverPid: 2 ** 22 + 1 })).rejects.toThrow(
      /--server-pid 4194305: no such process/,
    );
  });
});
