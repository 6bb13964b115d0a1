import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './interop-helpers.js';
import { TestClient } from './test-client.js';
import { WebhookReceiver } from './webhook-receiver.js';

const cli = resolve(import.meta.dirname, '../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'bayou-cli-'));
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Environment without the caller's BAYOU_* / PORT / HOST, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('BAYOU_') && k !== 'PORT' && k !== 'HOST') env[k] = v;
  return { ...env, ...extra };
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  waitFor: (re: RegExp) => Promise<RegExpExecArray>;
  exit: Promise<number | null>;
}

function run(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn('node', [cli, ...args], { env: cleanEnv(env) });
  children.push(child);
  let out = '';
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = w.re.exec(out);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    out: () => out,
    exit,
    waitFor: (re) =>
      new Promise((resolveWait, reject) => {
        waiters.push({ re, resolve: resolveWait });
        check();
        exit.then(() => reject(new Error(`exited before ${re}: ${out}`)));
      }),
  };
}

/** A long-polling client of the server at `base` (endpoint `path`); it keeps the browser cookie. */
function lp(base: string | undefined, path = '/bayeux', headers: Record<string, string> = {}): TestClient {
  if (base === undefined) throw new Error('the server printed no URL');
  return new TestClient(base, 'long-polling', headers, path);
}

describe('bayou CLI', () => {
  it('prints its version', () => {
    const r = spawnSync('node', [cli, '--version'], { encoding: 'utf8' });
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8'));
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('names an unknown flag and the closest valid one', () => {
    const r = spawnSync('node', [cli, 'start', '--jwt-secrett', 'x'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown flag --jwt-secrett; did you mean --jwt-secret?');
  });

  it('prints usage with every flag on --help', () => {
    const r = spawnSync('node', [cli, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    for (const flag of ['--port', '--host', '--path', '--config', '--allowed-origins'])
      expect(r.stdout).toContain(flag);
  });

  it('rejects a bad flag value with a message that says how to fix it', () => {
    const r = spawnSync('node', [cli, 'start', '--port', 'eighty'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--port must be 0-65535, got "eighty"');
  });

  it('rejects an unknown option in the config file, naming it and the closest valid one', () => {
    const config = resolve(import.meta.dirname, 'fixtures/bad-config.json');
    const r = spawnSync('node', [cli, 'start', '--config', config], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `bayou: unknown option(s) in config ${config}: maxConnectionz (did you mean maxConnections?)\n`,
    );
  });

  it('starts, prints its URL, serves the endpoint and stops on SIGTERM', async () => {
    const child = spawn('node', [cli, 'start', '--port', '0', '--host', '127.0.0.1', '--path', '/cometd'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const base = await new Promise<string>((res) => {
      child.stdout.on('data', (d: Buffer) => {
        const m = /listening on (http:\/\/\S+)/.exec(d.toString());
        if (m) res(m[1] as string);
      });
    });
    expect((await lp(base, '/cometd').handshake()).successful).toBe(true);
    child.kill('SIGTERM');
    expect(await new Promise((res) => child.on('exit', res))).toBe(0);
  });

  it('with --trust-proxy, the per-IP limits (here from BAYOU_MAX_SESSIONS_PER_IP) count the client behind the proxy', async () => {
    const server = run(['start', '--port', '0', '--host', '127.0.0.1', '--trust-proxy', 'loopback'], {
      BAYOU_MAX_SESSIONS_PER_IP: '1',
    });
    const [, base] = await server.waitFor(/listening on (http:\/\/\S+) /);
    let cookie: string | null = null;
    const from = async (ip: string) => {
      const c = lp(base, '/bayeux', { 'x-forwarded-for': ip, 'x-forwarded-proto': 'https' });
      const reply = await c.handshake();
      cookie = c.lastSetCookie;
      return reply;
    };
    expect((await from('203.0.113.7'))?.successful).toBe(true);
    // The proxy said the client came over https: the browser cookie is Secure.
    expect(cookie).toMatch(/^BAYEUX_BROWSER=[\w-]+; .*; Secure$/);
    expect(await from('203.0.113.7')).toMatchObject({ successful: false, error: '403:1:session_limit' });
    // Another client behind the same proxy has its own count.
    expect((await from('198.51.100.2'))?.successful).toBe(true);
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
  });

  it('rejects a limit flag the server cannot take, by the range of its option', () => {
    const r = spawnSync('node', [cli, 'start', '--port', '0', '--sweep-interval', '5'], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--sweep-interval must be at least 10 (ms), got "5"');
  });

  it('rejects a --trust-proxy it cannot use, saying what to give', () => {
    const bad = spawnSync('node', [cli, 'start', '--port', '0', '--trust-proxy', '10.0.0.300'], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('option "trustProxy" (--trust-proxy, BAYOU_TRUST_PROXY) has a bad entry');
    expect(bad.stderr).toContain("use the proxy's addresses, CIDR ranges or loopback/linklocal/uniquelocal");
    const hops = spawnSync('node', [cli, 'start', '--port', '0'], {
      encoding: 'utf8',
      env: cleanEnv({ BAYOU_TRUST_PROXY: '1' }),
    });
    expect(hops.status).toBe(2);
    expect(hops.stderr).toContain('cannot be a hop count (1): Fastify then trusts no peer');
  });

  it('takes flags over env over the file, and logs JSON lines when not on a terminal', async () => {
    const config = join(dir, 'precedence.json');
    writeFileSync(
      config,
      JSON.stringify({ path: '/file', host: '127.0.0.1', port: 0, transports: ['long-polling'] }),
    );
    const fromEnv = run(['start', '--config', config], { BAYOU_PATH: '/env' });
    const [, base] = await fromEnv.waitFor(/listening on (http:\/\/\S+) \(Bayeux endpoint \S+\/env\)/);
    expect((await lp(base, '/env').handshake()).successful).toBe(true);
    const line = (await fromEnv.waitFor(/^\{.*OPEN server.*\}$/m))[0];
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: expect.stringContaining('localhost only') });
    fromEnv.child.kill('SIGTERM');
    expect(await fromEnv.exit).toBe(0);
    const fromFlag = run(['start', '--config', config, '--path', '/flag'], { BAYOU_PATH: '/env' });
    await fromFlag.waitFor(/Bayeux endpoint \S+\/flag\)/);
    fromFlag.child.kill('SIGTERM');
    expect(await fromFlag.exit).toBe(0);
  });

  it('applies a bayou.config.mjs with tokens, rules and hooks', async () => {
    const secret = 'cli-test-secret-of-at-least-32-chars';
    const config = join(dir, 'bayou.config.mjs');
    writeFileSync(
      config,
      `export default {
        host: '127.0.0.1', port: 0,
        channels: { rules: [{ pattern: '/chat/**', publish: 'authenticated' }] },
        canPublish: (session, channel) => channel !== '/chat/muted',
      };`,
    );
    const server = run(['start', '--config', config], {
      BAYOU_JWT_SECRET: secret,
      BAYOU_API_KEY: 'api-key-0123456789',
    });
    const [, base] = await server.waitFor(/listening on (http:\/\/\S+)/);
    expect(await lp(base).handshake()).toMatchObject({ error: '403::handshake_denied' });
    const token = await new SignJWT({ sub: 'ada', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(secret));
    const ada = lp(base);
    expect(await ada.handshake({ auth: { token } })).toMatchObject({ successful: true });
    const clientId = ada.clientId;
    const replies = await ada.send([
      { channel: '/chat/room', clientId, data: 1, id: 'a' },
      { channel: '/chat/muted', clientId, data: 1, id: 'b' },
      { channel: '/news', clientId, data: 1, id: 'c' },
    ]);
    expect(replies.map((r) => r.error ?? 'ok')).toEqual([
      'ok',
      '403:/chat/muted:publish_denied',
      '403:/news:publish_denied',
    ]);
    const api = await fetch(`${base}/api/publish`, {
      method: 'POST',
      headers: { authorization: 'Bearer api-key-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ channel: '/news', data: 'from a backend' }),
    });
    expect(api.status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
  });

  it('exits at once on a second signal, and after the shutdown timeout on one', async () => {
    const config = join(dir, 'stuck.mjs');
    // A handshake whose hook never answers keeps a request in flight: close() waits for it.
    writeFileSync(
      config,
      `export default { host: '127.0.0.1', port: 0,
        authenticate: () => { process.stdout.write('hook called\\n'); return new Promise(() => {}); } };`,
    );
    for (const [signals, code, message] of [
      [['SIGTERM', 'SIGINT'], 130, /SIGINT again: exiting without waiting/],
      [['SIGINT'], 1, /graceful shutdown took longer than 300 ms/],
    ] as const) {
      const server = run(['start', '--config', config, '--shutdown-timeout', '300']);
      const [, base] = await server.waitFor(/listening on (http:\/\/\S+)/);
      const stuck = lp(base)
        .handshake()
        .catch(() => null);
      await server.waitFor(/hook called/);
      for (const s of signals) {
        server.child.kill(s);
        await server.waitFor(/shutting down/);
      }
      expect(await server.exit).toBe(code);
      expect(server.out()).toMatch(message);
      await stuck;
    }
  });
  it('takes --webhook-url, BAYOU_WEBHOOK_SECRET and --proxy-connect-url: signed events, handshakes decided by the backend', async () => {
    const hooks = new WebhookReceiver('cli-webhook-secret');
    await hooks.start();
    // A connect backend: a user for the right password, a Bayeux error otherwise.
    const backend = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        const ok = (JSON.parse(body) as { ext?: { pw?: string } }).ext?.pw === 'ok';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ok ? { result: { user: 'cli-user' } } : { error: '403::wrong_pw' }));
      });
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const connectUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}/connect`;
    try {
      const server = run(
        [
          'start',
          '--port',
          '0',
          '--host',
          '127.0.0.1',
          '--webhook-url',
          hooks.url,
          '--proxy-connect-url',
          connectUrl,
        ],
        { BAYOU_WEBHOOK_SECRET: 'cli-webhook-secret' },
      );
      const [, base] = await server.waitFor(/listening on (http:\/\/\S+) /);
      expect(await lp(base).handshake({ pw: 'no' })).toMatchObject({
        successful: false,
        error: '403::wrong_pw',
      });
      const hello = await lp(base).handshake({ pw: 'ok' });
      expect(hello.successful).toBe(true);
      await eventually(() => hooks.unique('session.connected').length === 1);
      expect(hooks.unique('session.connected')[0]).toMatchObject({
        clientId: hello.clientId,
        user: 'cli-user',
      });
      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
      // The graceful shutdown delivered the session's end before the process exited.
      expect(hooks.unique('session.disconnected')[0]).toMatchObject({
        clientId: hello.clientId,
        reason: 'shutdown',
      });
      expect(hooks.posts.every((p) => p.valid)).toBe(true);
    } finally {
      await hooks.stop();
      await new Promise((r) => backend.close(r));
    }
  });
});
