/**
 * What `bayou start` says when it cannot start (one line with the fix, exit code 2, no
 * stack) and while it runs on Redis (the engine and the console in the start-up log, Redis
 * going away and coming back logged once each, stdout JSON only without a terminal) —
 * issue #31, items 3 and 4. The real CLI, a real port held by another server, a real
 * redis-server killed and started again.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BayouProcess, cliPath, startBayou } from './bayou-process.js';
import { eventually } from './cluster-helpers.js';
import { freePort } from './programs.js';
import { RedisServer } from './redis-server.js';

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bayou start <args>` to its end (it must end by itself: a start-up failure). */
function runToExit(args: string[]): Promise<Ended> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('BAYOU_') && k !== 'PORT' && k !== 'HOST') env[k] = v;
  const child = spawn('node', [cliPath, 'start', ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** The one line of a start-up failure: exit code 2, nothing else on stderr, no stack. */
function oneLine(ended: Ended): string {
  expect(ended.code).toBe(2);
  const lines = ended.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(ended.stderr).not.toMatch(/\n\s+at /);
  return lines[0] as string;
}

describe('bayou start failing to start', () => {
  let holder: Server;
  let held: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    held = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => holder.close(() => r())));

  it('names the port in use and the fix, in one line with exit code 2', async () => {
    const line = oneLine(await runToExit(['--port', String(held), '--host', '127.0.0.1']));
    expect(line).toBe(
      `bayou: port ${held} on 127.0.0.1 is in use — stop the other process, or pass --port <n> (--port 0 picks a free port)`,
    );
  });

  it('says an address is not of this machine', async () => {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of a real machine.
    const line = oneLine(await runToExit(['--port', '0', '--host', '192.0.2.1']));
    expect(line).toBe(
      'bayou: 192.0.2.1 is not an address of this machine — pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)',
    );
  });

  it('names the Redis it cannot reach, why, and the fix', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const line = oneLine(await runToExit(['--port', '0', '--redis', url]));
    expect(line).toContain(`bayou: cannot join the cluster on ${url}: connect ECONNREFUSED`);
    expect(line).toContain(
      'is Redis running there? Start it (redis-server), or fix --redis / BAYOU_REDIS_URL',
    );
  });

  it('with --workers, says it once however many workers fail the same way, and exits 2', async () => {
    // Each of the 3 workers meets the closed Redis port at once; the primary tells it once.
    const url = `redis://127.0.0.1:${await freePort()}`;
    const ended = await runToExit(['--port', '0', '--workers', '3', '--redis', url]);
    const line = oneLine(ended);
    expect(line).toContain(`bayou: cannot join the cluster on ${url}: connect ECONNREFUSED`);
    expect(line).toContain('is Redis running there?');
    expect(ended.stdout).toBe('');
  });

  it('says how to fix a config module importing @bayou/server where it is not installed', async () => {
    // A folder outside the repository: no node_modules above it resolves @bayou/server.
    const outside = mkdtempSync(join(tmpdir(), 'bayou-outside-'));
    const config = join(outside, 'bayou.config.mjs');
    writeFileSync(
      config,
      "import { defineConfig } from '@bayou/server';\nexport default defineConfig({ port: 8080 });\n",
    );
    const line = oneLine(await runToExit(['--config', config]));
    expect(line).toContain(`bayou: cannot load config ${config}: Cannot find package '@bayou/server'`);
    expect(line).toMatch(
      / — install it next to the file \(npm install @bayou\/server\), or drop the import: defineConfig only gives the object its type, so `export default \{ port: 8080 \}` works alone; or use a JSON config \(--config bayou.config.json\)$/,
    );
  });

  it('refuses more demo symbols than exist (AAA…ZZZ), from the flag and from the file', async () => {
    const flag = oneLine(await runToExit(['--port', '0', '--demo-feed', '--demo-symbols', '20000']));
    expect(flag).toBe('bayou: --demo-symbols must be 1-17576 (the symbols AAA…ZZZ), got "20000"');
    const config = join(mkdtempSync(join(tmpdir(), 'bayou-demo-')), 'demo.json');
    writeFileSync(config, JSON.stringify({ demoFeed: { symbols: 20000 } }));
    const file = oneLine(await runToExit(['--port', '0', '--config', config]));
    expect(file).toBe(
      'bayou: option "demoFeed.symbols" must be a whole number from 1 to 17576 (the symbols AAA…ZZZ)',
    );
  });

  it('names the TLS file that is wrong: not a key, not a certificate, or a key of another certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-tls-'));
    const pair = (name: string) => {
      const args = [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ];
      execFileSync(
        'openssl',
        [...args, '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`)],
        {
          stdio: 'ignore',
          input: '',
        },
      );
      return { key: join(dir, `${name}.key`), cert: join(dir, `${name}.crt`) };
    };
    const a = pair('a');
    const b = pair('b');
    const tls = (key: string, cert: string) =>
      runToExit(['--port', '0', '--host', '127.0.0.1', '--tls-key', key, '--tls-cert', cert]);
    const fix = 'give a PEM private key (--tls-key) and its PEM certificate chain (--tls-cert)';
    const swapped = oneLine(await tls(a.cert, a.key));
    expect(swapped.startsWith(`bayou: cannot serve TLS: ${a.cert} is not a PEM private key (`)).toBe(true);
    expect(swapped).toContain(`) — ${fix}`);
    const mismatched = oneLine(await tls(b.key, a.cert));
    expect(mismatched).toContain(
      `cannot serve TLS: the key ${b.key} does not belong to the certificate ${a.cert}`,
    );
  });

  it('prints the stack as well at --log-level debug', async () => {
    const ended = await runToExit(['--port', String(held), '--host', '127.0.0.1', '--log-level', 'debug']);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toMatch(/EADDRINUSE[\s\S]*\n\s+at /);
  });
});

describe('bayou start on Redis, without a terminal', () => {
  let redis: RedisServer;
  let bayou: BayouProcess | null = null;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    if (bayou !== null && bayou.child.exitCode === null) bayou.child.kill('SIGKILL');
    await bayou?.exited;
    bayou = null;
  });
  afterAll(() => redis.stop());

  const lines = (p: BayouProcess) =>
    p.output
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });

  it('logs JSON only: the engine and the console at start, Redis going away and coming back once each', async () => {
    bayou = await startBayou(['--port', '0', '--redis', redis.url, '--admin'], 20_000, {
      BAYOU_ADMIN_PASSWORD: 'a long passphrase',
    });
    const p = bayou;
    const base = `http://127.0.0.1:${p.port}`;
    // Every line is JSON (JSON.parse throws on a plain one), the listening line among them.
    await eventually(() =>
      expect(lines(p).map((l) => l.msg)).toContain(
        `operator's console at ${base}/admin (sign in with the console password)`,
      ),
    );
    const msgs = lines(p).map((l) => l.msg);
    expect(msgs).toContain(`Bayou listening on ${base} (Bayeux endpoint ${base}/bayeux)`);
    expect(lines(p).find((l) => l.engine === 'redis')).toMatchObject({
      level: 30,
      redis: redis.url,
      msg: expect.stringMatching(
        new RegExp(`^engine: Redis at ${redis.url} \\(node \\S+, key prefix bayou:\\)$`),
      ),
    });

    await redis.kill();
    const away = `Redis at ${redis.url} went away`;
    await eventually(() => expect(lines(p).some((l) => l.msg.startsWith(away))).toBe(true), 10_000);
    await redis.restart();
    const back = `Redis at ${redis.url} is back: serving again`;
    await eventually(() => expect(lines(p).map((l) => l.msg)).toContain(back), 15_000);

    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    const all = lines(p);
    expect(all.filter((l) => l.msg.startsWith(away)).map((l) => l.level)).toEqual([40]);
    expect(all.filter((l) => l.msg === back).map((l) => l.level)).toEqual([30]);
  });

  it("logs JSON only with --workers too: the primary writes its lines in the workers' shape", async () => {
    bayou = await startBayou(['--port', '0', '--redis', redis.url, '--workers', '2']);
    const p = bayou;
    await eventually(() => expect(lines(p).filter((l) => l.engine === 'redis')).toHaveLength(2));
    expect(lines(p).map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^Bayou listening on http:\/\/127\.0\.0\.1:\d+ .* with 2 workers/),
    );
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(lines(p).map((l) => l.msg)).toContain(
      'SIGTERM: shutting down 2 workers (send it again to exit at once)',
    );
  });

  it('names the in-process engine without --redis', async () => {
    bayou = await startBayou(['--port', '0']);
    const p = bayou;
    await eventually(() =>
      expect(lines(p).find((l) => l.engine === 'memory')?.msg).toBe(
        'engine: in-process memory (one node; --redis <url> joins a cluster)',
      ),
    );
  });
});
