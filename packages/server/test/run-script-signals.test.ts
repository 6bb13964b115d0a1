/**
 * `npm start` and `npm run grid` run the demo server under pnpm under the wrapper
 * (scripts/run.mjs). Stopping the wrapper (`kill <pid>`, Ctrl-C, a closed terminal) must
 * stop the server too: scripts/serve.mjs runs the command in a process group of its own
 * and passes the signal on to all of it. Here the command is a shell (which, like pnpm,
 * does not pass SIGTERM on) running a Node process that prints its pid and waits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';

const serveModule = resolve(__dirname, '../../../scripts/serve.mjs');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start stops its server with it', () => {
  const started: ChildProcess[] = [];
  const grandchildren: number[] = [];
  afterEach(() => {
    for (const pid of grandchildren.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const c of started.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    '%s to the wrapper ends the server under it',
    async (signal) => {
      const server = `node -e "console.log('pid', process.pid); setInterval(() => {}, 1000)"`;
      const script = `import(${JSON.stringify(serveModule)}).then((m) => m.serve('sh', ['-c', ${JSON.stringify(server)}], process.cwd()))`;
      const wrapper = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      started.push(wrapper);
      let out = '';
      wrapper.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const pid = await eventually(() => {
        const m = /pid (\d+)/.exec(out);
        return m === null ? false : Number(m[1]);
      });
      grandchildren.push(pid);
      const exited = new Promise<number | null>((done) => wrapper.on('exit', (code) => done(code)));
      wrapper.kill(signal);
      expect(await exited).toBeGreaterThan(128); // exits as its command did: ended by the signal
      await eventually(() => expect(alive(pid)).toBe(false));
    },
  );
});
