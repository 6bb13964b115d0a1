/**
 * Runs `fixtures/proxy-backend.py`, the Python backend of the proxy hook tests, on a free
 * loopback port; it ends when its stdin closes, so it cannot outlive the test process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

export interface BackendRequest {
  path: string;
  body: Record<string, unknown>;
  token: string | null;
}

export class PythonBackend {
  private constructor(
    private readonly child: ChildProcess,
    readonly base: string,
  ) {}

  static async start(): Promise<PythonBackend> {
    const script = resolve(import.meta.dirname, 'fixtures/proxy-backend.py');
    const child = spawn(process.env.PYTHON ?? 'python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const port = await new Promise<number>((ok, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error('the Python backend did not start within 10 s')), 10_000);
      child.once('error', (err) => {
        clearTimeout(timer);
        fail(new Error(`cannot run python3 (the proxy hook tests need it): ${err.message}`));
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /PORT (\d+)/.exec(out);
        if (m !== null) {
          clearTimeout(timer);
          ok(Number(m[1]));
        }
      });
    });
    return new PythonBackend(child, `http://127.0.0.1:${port}`);
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  async requests(path?: string): Promise<BackendRequest[]> {
    const all = (await (await fetch(this.url('/requests'))).json()) as BackendRequest[];
    return all.filter((r) => path === undefined || r.path === path);
  }

  async stop(): Promise<void> {
    const exited = new Promise((ok) => this.child.once('exit', ok));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
