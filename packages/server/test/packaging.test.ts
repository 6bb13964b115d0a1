/**
 * The proof that `npx @bayou/server start` works outside this repository: pack the
 * protocol and server packages, install the tarballs into an empty project with plain
 * npm, start the CLI there and ask /healthz.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const packages = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'bayou-pack-'));
let child: ChildProcess | null = null;

afterAll(() => {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

function pack(dir: string): string {
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
    cwd: dir,
    encoding: 'utf8',
  });
  return join(work, out.trim().split('\n').pop() as string);
}

describe('packaging', () => {
  it('installs from npm-packed tarballs and serves /healthz through `npx bayou start`', async () => {
    const tarballs = [pack(join(packages, 'protocol')), pack(join(packages, 'server'))];
    const app = join(work, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], {
      cwd: app,
      stdio: 'pipe',
    });
    child = spawn(
      'npx',
      ['--no-install', 'bayou', 'start', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
      {
        cwd: app,
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so the server npx starts can be signalled with it.
        detached: true,
      },
    );
    const base = await new Promise<string>((resolvePromise, reject) => {
      let out = '';
      child?.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) resolvePromise(m[1] as string);
      });
      child?.stderr?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child?.on('exit', (code) => reject(new Error(`bayou exited with ${code}: ${out}`)));
    });
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    // The installed package is importable as a library too.
    const mod = execFileSync(
      'node',
      ['-e', "import('@bayou/server').then(m => console.log(typeof m.createServer))"],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    expect(mod.trim()).toBe('function');
    // Signal the whole group we started (npx and the server under it).
    process.kill(-(child.pid as number), 'SIGTERM');
    await new Promise((r) => child?.on('exit', r));
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 180_000);
});
