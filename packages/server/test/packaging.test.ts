/**
 * The published packages work outside this repository. Every package is packed with
 * `npm pack` (scripts off: `npm test` built them already), the tarballs are installed with
 * plain `npm install` into an empty project, and there:
 * - an ES module and a CommonJS module each start a server with `createServer`, register the
 *   Fastify plugin, make a round trip with `@bayou/client`, render `@bayou/react` on the
 *   server and use `@bayou/protocol` and `@bayou/loadtest`;
 * - TypeScript checks an `.mts` and a `.cts` consumer (NodeNext), so both type entries resolve;
 * - `npx @bayou/server start` serves /healthz and `npx @bayou/loadtest --help` prints its usage
 *   (the scoped names the READMEs give: a bare `npx bayou` would ask the registry for a
 *   package this project does not own).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packagesDir = resolve(import.meta.dirname, '../..');
const PACKAGES = ['protocol', 'server', 'browser-client', 'react-bindings', 'loadtest'];
const work = mkdtempSync(join(tmpdir(), 'bayou-pack-'));
const app = join(work, 'app');
let child: ChildProcess | null = null;

function pack(dir: string): string {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return join(work, (JSON.parse(out) as { filename: string }[])[0]?.filename as string);
}

// The same program twice: `load` is a top-level `await import()` in the ES module, `require` in CommonJS.
const program = (load: (name: string) => string) => `
const { createServer, bayou } = ${load('@bayou/server')};
const { BayouClient, longPolling } = ${load('@bayou/client')};
const { matches } = ${load('@bayou/protocol')};
const { parseDuration } = ${load('@bayou/loadtest')};
const { BayouProvider, LiveCell } = ${load('@bayou/react')};
const React = ${load('react')};
const { renderToString } = ${load('react-dom/server')};
const Fastify = ${load('fastify')};

async function main() {
  const server = await createServer({ port: 0, host: '127.0.0.1' });
  const base = await server.listen();
  const client = new BayouClient(base + '/bayeux', { transports: [longPolling] });
  await client.connect();
  const seen = [];
  await client.subscribe('/hello', (m) => seen.push(m.data)).ready;
  await client.publish('/hello', { from: 'consumer' });
  while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
  await client.disconnect();
  await server.close();

  const plain = (Fastify.default ?? Fastify)();
  await plain.register(bayou.default ?? bayou, { path: '/bayeux' });
  await plain.ready();
  const plugin = typeof plain.bayou.publish;
  await plain.close();

  const html = renderToString(
    React.createElement(BayouProvider, { client }, React.createElement(LiveCell, { subject: '/x', field: 'y', placeholder: '…' })),
  );
  console.log(JSON.stringify({ data: seen[0], plugin, wildcard: matches('/a/*', '/a/b'), ms: parseDuration('2s'), html }));
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
`;

const TYPES = `
import { createServer, type BayouServer } from '@bayou/server';
import { BayouClient, type ConnectionState } from '@bayou/client';
import { matches } from '@bayou/protocol';
import { parseDuration } from '@bayou/loadtest';
import { useRecord, type SubscriptionStatus } from '@bayou/react';
export const server: Promise<BayouServer> = createServer({ port: 0 });
export const state: ConnectionState = new BayouClient('http://x/bayeux').state;
export const ok: boolean = matches('/a/*', '/a/b');
export const ms: number = parseDuration('1s');
export const status: SubscriptionStatus = 'subscribed';
export const hook: typeof useRecord = useRecord;
`;

beforeAll(() => {
  const tarballs = PACKAGES.map((p) => pack(join(packagesDir, p)));
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  execFileSync(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...tarballs,
      'react@19',
      'react-dom@19',
      'typescript@5',
      '@types/node@20',
      '@types/react@19',
    ],
    { cwd: app, stdio: 'pipe' },
  );
}, 240_000);

afterAll(() => {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('the packed packages in an empty npm project', () => {
  it('install fastify as the peer it is, and bufferutil only as an optional dependency', () => {
    const server = JSON.parse(readFileSync(join(app, 'node_modules/@bayou/server/package.json'), 'utf8'));
    expect(server.peerDependencies.fastify).toBeDefined();
    expect(server.dependencies.fastify).toBeUndefined();
    expect(server.optionalDependencies.bufferutil).toBeDefined();
    // npm installed the peer once, at the top: the plugin and the app share one Fastify.
    expect(() => readFileSync(join(app, 'node_modules/fastify/package.json'))).not.toThrow();
    expect(() =>
      readFileSync(join(app, 'node_modules/@bayou/server/node_modules/fastify/package.json')),
    ).toThrow();
  });

  it.each([
    ['an ES module', 'consumer.mjs', (m: string) => `(await import('${m}'))`],
    ['a CommonJS module', 'consumer.cjs', (m: string) => `require('${m}')`],
  ])('work from %s', async (_name, file, load) => {
    writeFileSync(join(app, file), program(load));
    // As on Node 20 before 20.19, where require() of an ES module fails: every CommonJS entry
    // (and what it requires) must be CommonJS all the way down.
    const flags = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')
      ? ['--no-experimental-require-module']
      : [];
    const { stdout } = await run(process.execPath, [...flags, file], { cwd: app, timeout: 30_000 });
    const out = JSON.parse(stdout.trim());
    expect(out).toMatchObject({ data: { from: 'consumer' }, plugin: 'function', wildcard: true, ms: 2000 });
    expect(out.html).toContain('…');
  });

  it('type-check from an .mts and a .cts module (NodeNext)', async () => {
    writeFileSync(join(app, 'esm.mts'), TYPES);
    writeFileSync(join(app, 'cjs.cts'), TYPES);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          lib: ['ES2022', 'DOM'],
          types: ['node'],
        },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    const check = await run(join(app, 'node_modules/.bin/tsc'), ['-p', app], { cwd: app }).catch((e) => e);
    expect(check.stdout, 'tsc output').toBe('');
  }, 60_000);

  it('run `npx @bayou/loadtest --help`', async () => {
    const { stdout } = await run('npx', ['--no-install', '@bayou/loadtest', '--help'], { cwd: app });
    expect(stdout).toContain('usage: bayou-loadtest');
  });

  it('serve /healthz through `npx @bayou/server start`', async () => {
    child = spawn(
      'npx',
      ['--no-install', '@bayou/server', 'start', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
      // Its own process group, so the server npx starts can be signalled with it.
      { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
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
    process.kill(-(child.pid as number), 'SIGTERM');
    await new Promise((r) => child?.on('exit', r));
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 60_000);
});
