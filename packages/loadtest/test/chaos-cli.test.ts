/**
 * The real `bayou-loadtest chaos` command (bin → dist) on bad input: an unreachable --url is
 * refused at once with the fix, and a run that cannot get anywhere stops at SIGTERM.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const bin = resolve(import.meta.dirname, '../bin/bayou-loadtest.js');

function chaos(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [bin, 'chaos', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.resume();
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, exit, err: () => err };
}

describe('bayou-loadtest chaos on bad input', () => {
  // Port 1 on loopback: nothing listens there, so the connect is refused.
  it('refuses an unreachable --url with the fix and exit code 2', { timeout: 15_000 }, async () => {
    const run = chaos(['--url', 'http://127.0.0.1:1/bayeux', '--duration', '10m']);
    const [code] = await run.exit;
    expect(code).toBe(2);
    expect(run.err()).toMatch(/cannot reach --url http:\/\/127\.0\.0\.1:1\/bayeux \(ECONNREFUSED\)/);
    expect(run.err()).toMatch(/start the server \(npx @bayou\/server start\)/);
  });

  it('refuses an unknown --balancer, and --balancer nginx without nginx, with the fix and exit code 2', async () => {
    const bad = chaos(['--cluster', '3', '--balancer', 'haproxy']);
    expect((await bad.exit)[0]).toBe(2);
    expect(bad.err()).toMatch(/--balancer must be nginx or node, got "haproxy"/);
    const missing = chaos(['--cluster', '3', '--balancer', 'nginx'], { NGINX_PATH: '/nonexistent/nginx' });
    expect((await missing.exit)[0]).toBe(2);
    expect(missing.err()).toMatch(
      /needs nginx: install it \(apt-get install nginx\).*or pass --balancer node/,
    );
  });

  it('stops at SIGTERM while its clients retry an endpoint that is no Bayeux server', {
    timeout: 15_000,
  }, async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.statusCode = 404;
      res.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bayeux`;
    try {
      const args = ['--url', url, '--transport', 'long-polling', '--clients', '2', '--duration', '10m'];
      const run = chaos(args);
      // The reachability probe is a GET; a POST is a client's handshake, i.e. the run is on.
      await new Promise<void>((r) => server.on('request', (req) => req.method === 'POST' && r()));
      run.child.kill('SIGTERM');
      const [code] = await run.exit;
      expect(code).toBe(143);
      expect(run.err()).toContain('stopped by SIGTERM');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
