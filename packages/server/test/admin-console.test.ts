/**
 * The operator's console without a browser: every `/admin` route but the login form
 * answers 401 without a valid token, a wrong password is refused, only a session that
 * handshook with the console token reads the feed or runs the actions, and nothing
 * watches or counts while no console is open. (The page itself, on a 3-node cluster in
 * Chromium, is in admin-console-browser.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { BayouClient, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AdminCredential, TOKEN_TTL_MS } from '../src/admin/admin-token.js';
import { ADMIN_NEEDS_PASSWORD } from '../src/config/build-server.js';
import { adminConsole, type BayouServer, createServer } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { cliPath } from './bayou-process.js';
import { disconnectAll, eventually } from './cluster-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';

const PASSWORD = 'admin-console-password';
const clients: BayouClient[] = [];

function client(url: string, adminToken?: string): BayouClient {
  const c = new BayouClient(url, {
    transports: [websocket],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    ...(adminToken !== undefined ? { handshake: () => ({ bayouAdmin: adminToken }) } : {}),
  });
  clients.push(c);
  return c;
}

afterEach(() => disconnectAll(clients));

describe('the console on one node', () => {
  let server: BayouServer;
  let base: string;
  beforeAll(async () => {
    server = await createServer({ host: '127.0.0.1', port: 0, sweepInterval: 50, historySize: 10 });
    await server.app.register(adminConsole, { password: PASSWORD });
    base = await server.listen();
  });
  afterAll(() => server.close());

  const login = (body: string, type: string) =>
    fetch(`${base}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': type },
      body,
      redirect: 'manual',
    });

  it('answers no console route without the credential and refuses a wrong password', async () => {
    const form = await fetch(`${base}/admin`);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain('type="password"');
    expect(html).not.toContain('bayou-admin-token');

    const stale = new AdminCredential(PASSWORD).issue(Date.now() - TOKEN_TTL_MS - 1);
    const forged = `${Date.now() + 60_000}.${'A'.repeat(43)}`;
    const other = new AdminCredential('another-password-entirely').issue();
    for (const cookie of [
      undefined,
      'bayou_admin=nonsense',
      `bayou_admin=${stale}`,
      `bayou_admin=${forged}`,
      `bayou_admin=${other}`,
    ]) {
      for (const [method, path] of [
        ['GET', '/admin/console.js'],
        ['POST', '/admin/logout'],
      ]) {
        const r = await fetch(`${base}${path}`, {
          method,
          headers: cookie ? { cookie } : {},
          redirect: 'manual',
        });
        expect(r.status, `${method} ${path} with ${cookie}`).toBe(401);
      }
      if (cookie !== undefined)
        expect(await (await fetch(`${base}/admin`, { headers: { cookie } })).text()).not.toContain(
          'bayou-admin-token',
        );
    }

    expect((await login(JSON.stringify({ password: 'wrong' }), 'application/json')).status).toBe(401);
    expect((await login('{}', 'application/json')).status).toBe(401);
    const wrongForm = await login('password=wrong', 'application/x-www-form-urlencoded');
    expect(wrongForm.status).toBe(401);
    expect(await wrongForm.text()).toContain('Wrong password.');

    const ok = await login(`password=${PASSWORD}`, 'application/x-www-form-urlencoded');
    expect(ok.status).toBe(303);
    const setCookie = ok.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^bayou_admin=[^;]+; HttpOnly; SameSite=Strict; Path=\/admin/);
    const cookie = setCookie.split(';')[0] as string;
    const page = await (await fetch(`${base}/admin`, { headers: { cookie } })).text();
    expect(page).toContain('bayou-admin-token');
    // The chart shows what the page sampled since it opened, not a server-side history.
    expect(page).toContain('since this page was opened, the last five minutes at most');
    const script = await fetch(`${base}/admin/console.js`, { headers: { cookie } });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
  });

  it('lets only a console session read the feed and run the actions; no client publishes there', async () => {
    const url = `${base}/bayeux`;
    const plain = client(url);
    await plain.connect();
    await expect(plain.subscribe('/bayou/admin/stats', () => undefined).ready).rejects.toThrow(/admin_only/);
    await expect(plain.request('/service/bayou/admin/publish', { channel: '/x', data: 1 })).rejects.toThrow(
      /admin_only/,
    );
    await expect(plain.publish('/bayou/admin/stats', { fake: true })).rejects.toThrow(/read_only/);
    const forgedAdmin = client(url, `${Date.now() + 60_000}.forged`);
    await forgedAdmin.connect();
    await expect(forgedAdmin.subscribe('/bayou/admin/stats', () => undefined).ready).rejects.toThrow(
      /admin_only/,
    );

    // A plain client holding every broadcast channel sees the feed never: it is delivered to console sessions only.
    const everything: string[] = [];
    await plain.subscribe('/**', (m) => everything.push(m.channel)).ready;

    const token = new AdminCredential(PASSWORD).issue();
    const admin = client(url, token);
    await admin.connect();
    const snapshots: { nodes: { nodeId: string; sessions: number }[] }[] = [];
    await admin.subscribe('/bayou/admin/stats', (m) => snapshots.push(m.data as (typeof snapshots)[0])).ready;
    await eventually(() => expect(snapshots.length).toBeGreaterThanOrEqual(2), 5000);
    expect(snapshots[0]?.nodes).toEqual([
      expect.objectContaining({ nodeId: server.bayou.nodeId, sessions: 3 }),
    ]);

    await expect(
      admin.request('/service/bayou/admin/publish', { channel: '/chat/console', data: { text: 'hi' } }),
    ).resolves.toMatchObject({ published: true });
    await eventually(() => expect(everything).toContain('/chat/console'));
    expect(everything).not.toContain('/bayou/admin/stats');
    const seen = await admin.request<{ history: { data: unknown }[]; presence: unknown }>(
      '/service/bayou/admin/inspect',
      { channel: '/chat/console' },
    );
    expect(seen).toEqual({
      channel: '/chat/console',
      history: [{ data: { text: 'hi' }, position: expect.anything() }],
      presence: null,
    });
    await expect(admin.request('/service/bayou/admin/inspect', { channel: '/chat/*' })).rejects.toThrow(
      /not a broadcast channel/,
    );

    const ended = await admin.request<{ disconnected: number }>('/service/bayou/admin/disconnect', {
      clientId: plain.clientId,
    });
    expect(ended).toEqual({ disconnected: 1 });
    await eventually(() => expect(plain.state).toBe('disconnected'));
  });

  it('runs no timer and counts nothing while no console watches', async () => {
    const taps = operationsOf(server.app).taps;
    // The previous test's console has left: its node stops watching within WATCH_MS.
    await eventually(() => expect(taps.countingPublishes).toBe(false), 8000);
    const admin = client(`${base}/bayeux`, new AdminCredential(PASSWORD).issue());
    await admin.connect();
    const sub = admin.subscribe('/bayou/admin/stats', () => undefined);
    await sub.ready;
    await eventually(() => expect(taps.countingPublishes).toBe(true));
    sub.unsubscribe();
    await eventually(() => expect(taps.countingPublishes).toBe(false), 8000);
  });
});

describe('console logins', () => {
  it('refuses every login from an address after 10 wrong passwords in a minute, the right one too', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0 });
    await server.app.register(adminConsole, { password: PASSWORD });
    const base = await server.listen();
    try {
      const login = (password: string) =>
        fetch(`${base}/admin/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ password }),
        });
      for (let i = 0; i < 10; i++) expect((await login(`guess-${i}`)).status).toBe(401);
      const refused = await login(PASSWORD);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toEqual({ error: expect.stringMatching(/Too many wrong passwords/) });
    } finally {
      await server.close();
    }
  });
});

describe('the console on a server with tokens and channel rules', () => {
  let server: BayouServer;
  let base: string;
  beforeAll(async () => {
    server = await createServer({ host: '127.0.0.1', port: 0, auth: presenceAuth, trustClientSession: true });
    await server.app.register(adminConsole, { password: PASSWORD });
    base = await server.listen();
  });
  afterAll(() => server.close());

  it('lets the console session in without a JWT and past the channel rules; a JWT alone is no console', async () => {
    const url = `${base}/bayeux`;
    const anonymous = client(url);
    await expect(anonymous.connect()).rejects.toThrow();
    const user = new BayouClient(url, {
      transports: [websocket],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      token: () => token({ sub: 'ada' }),
    });
    clients.push(user);
    await user.connect();
    await expect(user.subscribe('/bayou/admin/stats', () => undefined).ready).rejects.toThrow(/admin_only/);
    const received: unknown[] = [];
    await user.subscribe('/chat/room', (m) => received.push(m.data)).ready;

    const admin = client(url, new AdminCredential(PASSWORD).issue());
    await admin.connect();
    const snapshots: unknown[] = [];
    await admin.subscribe('/bayou/admin/stats', (m) => snapshots.push(m.data)).ready;
    await eventually(() => expect(snapshots.length).toBeGreaterThan(0), 5000);
    // The console subscribes to its own channels only: the rules still decide the rest.
    await expect(admin.subscribe('/secret/x', () => undefined).ready).rejects.toThrow(/403/);
    await admin.request('/service/bayou/admin/publish', { channel: '/chat/room', data: { text: 'ops' } });
    await eventually(() => expect(received).toEqual([{ text: 'ops' }]));
    // Every session of a user (a token's sub) ends.
    await expect(admin.request('/service/bayou/admin/disconnect', { user: 'ada' })).resolves.toEqual({
      disconnected: 1,
    });
    await eventually(() => expect(user.state).toBe('disconnected'));
    expect(admin.state).toBe('connected');
  });
});

describe('bayou start --admin', () => {
  it('refuses a console without a password on a non-loopback interface, saying the fix', async () => {
    const env = { PATH: process.env.PATH ?? '' };
    const run = spawnSync('node', [cliPath, 'start', '--port', '0', '--host', '0.0.0.0', '--admin'], {
      env,
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(ADMIN_NEEDS_PASSWORD);
  });
});
