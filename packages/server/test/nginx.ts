/**
 * A real nginx for a test, running the repository's own `deploy/cluster/nginx.conf`: its
 * `upstream` servers and `listen` are pointed at loopback ports, and a log of which node
 * answered each request is added; everything else (the `location` block with its proxy
 * settings) is the file as shipped. `NGINX_PATH` (set by scripts/services.mjs) names the
 * program; under CI=true a missing one is a failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '../../../scripts/eventually.mjs';
import { freePort, programPath } from './programs.js';

export const shippedConfig = resolve(import.meta.dirname, '../../../deploy/cluster/nginx.conf');

/** The nginx program, or null when this machine has none. */
export function nginxPath(): string | null {
  return programPath('nginx', 'NGINX_PATH');
}

/** The shipped configuration, pointed at `upstreams` (loopback ports) and `port`. */
export function configFor(shipped: string, upstreams: readonly number[], port: number, dir: string): string {
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p};`).join('\n');
  let text = shipped.replace(/^(\s*server\s+node\d+:8080;\n)+/m, `${servers}\n`);
  if (text === shipped)
    throw new Error('nginx.conf: no `server nodeN:8080;` lines to point at the test nodes');
  text = text.replace(/listen 8080;/, `listen 127.0.0.1:${port};`);
  // What a test run needs on top: its own pid, logs and temporary files, in the foreground.
  const paths = [
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'daemon off;',
    process.getuid?.() === 0 ? 'user root;' : '',
  ].join('\n');
  const logs = [
    "  log_format upstream '$request_method $uri $status $upstream_addr';",
    `  access_log ${dir}/upstream.log upstream;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
  ].join('\n');
  return `${paths}\n${text.replace(/^http \{\n/m, `http {\n${logs}\n`)}`;
}

export class Nginx {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(upstreams: readonly number[]): Promise<Nginx> {
    const program = nginxPath();
    if (program === null)
      throw new Error('nginx not found: run the tests through `npm test`, which installs it');
    const dir = mkdtempSync(join(tmpdir(), 'bayou-nginx-'));
    chmodSync(dir, 0o755);
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, configFor(readFileSync(shippedConfig, 'utf8'), upstreams, port, dir));
    const child = spawn(program, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const nginx = new Nginx(child, dir, port);
    const answered = await eventually(
      async () => child.exitCode !== null || (await fetch(`${nginx.base}/healthz`)).status > 0,
      10_000,
      'nginx to answer',
      50,
    ).catch(() => false);
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}`);
    if (!answered) {
      await nginx.stop();
      throw new Error(`nginx did not answer within 10 s: ${stderr}`);
    }
    return nginx;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The node (upstream port) that answered each request so far, in order: [method, uri, port]. */
  requests(): [string, string, number][] {
    const file = join(this.dir, 'upstream.log');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => {
        const [method, uri, , upstream] = line.split(' ');
        return [method ?? '', uri ?? '', Number((upstream ?? '').split(':').pop())];
      });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.pid !== undefined) {
      const exited = new Promise((done) => this.child.once('exit', done));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 5000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
