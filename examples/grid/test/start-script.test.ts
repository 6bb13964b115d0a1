/** `pnpm start` (node dist/server.js): serves the page and the demo feed, reads PORT/HOST, stops on SIGTERM. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const cwd = fileURLToPath(new URL('..', import.meta.url));
let child: ChildProcess | null = null;

afterEach(() => {
  if (child !== null && child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
  child = null;
});

let printed = '';

function start(env: Record<string, string>): Promise<string> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.HOST;
  const proc = spawn(process.execPath, ['dist/server.js'], { cwd, env: { ...base, ...env } });
  child = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 15_000);
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Bayou live grid: (http:\/\/\S+?)\/\?rows/.exec(out);
      if (match) {
        printed = out;
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    proc.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
}

describe('the grid start script', () => {
  it('serves the page and the bundle, then exits 0 on SIGTERM', async () => {
    const base = await start({ PORT: '0', HOST: '127.0.0.1', GRID_SYMBOLS: '100' });
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const html = await fetch(`${base}/`);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<script type="module" src="app.js"></script>');
    const js = await fetch(`${base}/app.js`);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await js.text()).length).toBeGreaterThan(10_000);
    const exited = new Promise<number | null>((r) => child!.on('exit', (code) => r(code)));
    child!.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('listens on this machine only by default (an open server), and says so', async () => {
    const base = await start({ PORT: '0', GRID_SYMBOLS: '100' });
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed).toContain('(open server: this machine only, HOST=0.0.0.0 shares it)');
  });

  it('refuses a bad PORT with exit code 2', async () => {
    await expect(start({ PORT: 'eighty', HOST: '127.0.0.1' })).rejects.toThrow(/exited with 2/);
  });
});
