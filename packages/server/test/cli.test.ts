import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = resolve(import.meta.dirname, '../dist/cli.js');

describe('bayou CLI', () => {
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

  it('rejects an unknown option in the config file, naming it', () => {
    const config = resolve(import.meta.dirname, 'fixtures/bad-config.json');
    const r = spawnSync('node', [cli, 'start', '--config', config], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown option(s): maxConnectionz');
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
    const r = await fetch(`${base}/cometd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
      ]),
    });
    expect(((await r.json()) as { successful: boolean }[])[0]?.successful).toBe(true);
    child.kill('SIGTERM');
    expect(await new Promise((res) => child.on('exit', res))).toBe(0);
  });
});
