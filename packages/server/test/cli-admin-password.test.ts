/**
 * The console's password from the environment, whichever source turns the console on
 * (`--admin`, `BAYOU_ADMIN=1`, the config file's `admin.enabled`): the real CLI refuses a
 * wrong password on loopback and starts on a public address (issue #31, item 1).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouProcess, startBayou } from './bayou-process.js';

const PASSWORD = 'a long passphrase';
const dir = mkdtempSync(join(tmpdir(), 'bayou-admin-'));
const adminFile = join(dir, 'admin.json');
writeFileSync(adminFile, JSON.stringify({ admin: { enabled: true } }));

const running: BayouProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
});

async function login(port: number, password: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
  return { status: res.status, body: await res.json() };
}

const ways: { on: string; args: string[]; env: Record<string, string> }[] = [
  { on: 'the --admin flag', args: ['--admin'], env: {} },
  { on: 'BAYOU_ADMIN=1', args: [], env: { BAYOU_ADMIN: '1' } },
  { on: "the config file's admin.enabled", args: ['--config', adminFile], env: {} },
];

describe.each(ways)('BAYOU_ADMIN_PASSWORD with the console turned on by $on', ({ args, env }) => {
  const withPassword = { ...env, BAYOU_ADMIN_PASSWORD: PASSWORD };

  it('refuses a wrong password with 401 on loopback, and accepts the right one', async () => {
    const p = await startBayou(['--port', '0', '--host', '127.0.0.1', ...args], 20_000, withPassword);
    running.push(p);
    expect(await login(p.port, 'totally-wrong-guess')).toEqual({
      status: 401,
      body: { error: 'wrong password' },
    });
    const right = await login(p.port, PASSWORD);
    expect(right.status).toBe(200);
    expect(typeof (right.body as { token?: unknown }).token).toBe('string');
  });

  it('starts on a public address, where a wrong password is refused too', async () => {
    const p = await startBayou(['--port', '0', '--host', '0.0.0.0', ...args], 20_000, withPassword);
    running.push(p);
    expect((await login(p.port, 'totally-wrong-guess')).status).toBe(401);
  });
});
