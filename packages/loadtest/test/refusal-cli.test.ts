/**
 * The real `bayou-loadtest` command (bin → dist) before a run: `chat`, `feed` and `connections` against a
 * server that is not there or refuses every handshake stop at once with exit code 2 and the
 * reason, instead of publishing into the void and reporting every message lost; `--token`
 * is what `bayou start --jwt-secret` reads (`ext.auth.token`); `--html` says where it wrote;
 * `--help` lists `chaos`.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = resolve(import.meta.dirname, '../bin/bayou-loadtest.js');
const SECRET = 'a-test-secret-of-some-length-0123456789';

async function cli(args: string[]): Promise<{ code: number | null; out: string; err: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out, err, ms: Date.now() - started };
}

/** An HS256 JWT, as a backend would sign one for `bayou start --jwt-secret`. */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

const small = [
  '--clients',
  '4',
  '--rooms',
  '2',
  '--rooms-per-client',
  '1',
  '--subjects',
  '4',
  '--subjects-per-client',
  '2',
];
const quiet = ['--metrics-url', 'off', '--no-progress', '--drain', '1s'];

describe('bayou-loadtest refuses a server it cannot use before the run', () => {
  let server: BayouServer;
  let url: string;
  beforeAll(async () => {
    server = await createServer({ host: '127.0.0.1', port: 0, auth: { tokens: { secret: SECRET } } });
    url = `${await server.listen()}/bayeux`;
  });
  afterAll(() => server?.close());

  // connections reads only --clients of the sizes: the others are chat's and feed's.
  const sizes = (scenario: string) => (scenario === 'connections' ? ['--clients', '4'] : small);
  for (const scenario of ['chat', 'feed', 'connections']) {
    it(`${scenario}: nothing listening at --url → exit 2 at once with the fix`, {
      timeout: 15_000,
    }, async () => {
      const run = await cli([scenario, '--url', 'http://127.0.0.1:1/bayeux', ...sizes(scenario), ...quiet]);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/cannot reach --url http:\/\/127\.0\.0\.1:1\/bayeux \(ECONNREFUSED\)/);
      expect(run.out).not.toMatch(/lost/);
      expect(run.ms).toBeLessThan(5000);
    });

    it(`${scenario}: every handshake refused (no token) → exit 2 with the server's error and --token`, {
      timeout: 15_000,
    }, async () => {
      const run = await cli([scenario, '--url', url, ...sizes(scenario), ...quiet]);
      expect(run.code).toBe(2);
      expect(run.err).toContain('refused the handshake (403::handshake_denied)');
      expect(run.err).toContain('--token <jwt>');
      expect(run.out).not.toMatch(/lost/);
    });
  }

  it("the README's old --handshake-ext '{\"token\":…}' is refused the same way: Bayou reads ext.auth.token", {
    timeout: 15_000,
  }, async () => {
    const ext = JSON.stringify({ token: jwt({ sub: 'lt' }) });
    const run = await cli(['chat', '--url', url, '--handshake-ext', ext, ...small, ...quiet]);
    expect(run.code).toBe(2);
    expect(run.err).toContain('403::handshake_denied');
  });

  it('runs with --token (or --handshake-ext {"auth":{"token":…}}) and says where --html wrote', {
    timeout: 30_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lt-refusal-'));
    const html = join(dir, 'report.html');
    // With tokens, publishing is nobody's unless a claim (or a channel rule) allows it.
    const claims = { bayou: { subscribe: ['/chat/**'], publish: ['/chat/**'] } };
    const token = jwt({ sub: 'lt', exp: Math.floor(Date.now() / 1000) + 600, ...claims });
    const run = await cli([
      'chat',
      '--url',
      url,
      '--token',
      token,
      '--batches',
      '2',
      '--html',
      html,
      ...small,
      ...quiet,
    ]);
    expect(run.err).toBe('');
    expect(run.out).toMatch(/lost 0 /);
    expect(run.out).toContain(`wrote ${html} (open it in a browser)`);
    expect(existsSync(html)).toBe(true);
    expect(run.code).toBe(0);
    const ext = JSON.stringify({ auth: { token } });
    const spelled = await cli([
      'chat',
      '--url',
      url,
      '--handshake-ext',
      ext,
      '--batches',
      '2',
      ...small,
      ...quiet,
    ]);
    expect(spelled.code).toBe(0);
  });

  it('--help lists every scenario, chaos included', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/usage: bayou-loadtest <chat\|feed\|connections\|chaos>/);
    expect(run.out).toMatch(/^ {2}chaos {8}/m);
  });
});
