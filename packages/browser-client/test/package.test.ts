/**
 * `npm install @bayou/client` works outside this repository: the package is packed with
 * `npm pack`, installed with plain `npm install` into an empty project, and there the ESM
 * entry (with its types, under `tsc --noEmit`) and the IIFE file both work — against a
 * Faye server, over long-polling, since Node 20 has no global WebSocket.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FayeServer, startFaye } from './helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// The Faye server lives in this process: programs that talk to it must run asynchronously.
const run = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env },
  });

const CONSUMER_TS = `
import { BayouClient, BayouError, type ConnectionState, ErrorCodes, longPolling, type Message } from '@bayou/client';

const client = new BayouClient(process.argv[2] as string, { transports: [longPolling], wsOpenTimeout: 1000 });
const state: ConnectionState = client.state;
let unknownOption = '';
try {
  // @ts-expect-error an unknown option is a type error, and a TypeError at run time
  new BayouClient('http://x/bayeux', { noSuchOption: true });
} catch (e) {
  unknownOption = (e as Error).message;
}
const seen: Message[] = [];
await client.connect();
const sub = client.subscribe('/demo/*', (message) => seen.push(message));
await sub.ready;
await client.publish('/demo/one', { hello: 'world' });
while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
await client.disconnect();
const err: BayouError | null = null;
console.log(JSON.stringify({ state, unknownOption, data: seen[0]?.data, code: ErrorCodes.QUEUE_FULL, err }));
`;

const IIFE_JS = `
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
const code = readFileSync('node_modules/@bayou/client/dist/bayou.min.js', 'utf8');
const context = { URL, setTimeout, clearTimeout, queueMicrotask, fetch, AbortController, console };
vm.runInNewContext(code, context);
const client = new context.Bayou.BayouClient(process.argv[2]);
await client.connect();
const seen = [];
await client.subscribe('/iife', (m) => seen.push(m.data)).ready;
await client.publish('/iife', 'from the IIFE');
while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
await client.disconnect();
console.log(JSON.stringify({ transport: 'done', data: seen[0] }));
`;

describe('the packed package', () => {
  let dir: string;
  let faye: FayeServer;

  beforeAll(async () => {
    faye = await startFaye();
    dir = mkdtempSync(join(tmpdir(), 'bayou-client-pack-'));
    // Scripts off: prepack would rebuild dist/ under the other tests' feet (npm test built it already).
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', dir, '--json'], root);
    const tarball = (JSON.parse(packed) as { filename: string }[])[0]?.filename as string;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    npm(['install', '--no-audit', '--no-fund', join(dir, tarball), 'typescript@5'], dir);
  }, 180_000);
  afterAll(async () => {
    await faye?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships only the bundles and the types, and installs no dependency', () => {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/@bayou/client/package.json'), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.sideEffects).toBe(false);
    const files = readdirSync(join(dir, 'node_modules/@bayou/client/dist'));
    expect(files).toContain('index.js');
    expect(files).toContain('bayou.min.js');
    expect(files).toContain('index.d.ts');
    const installed = readdirSync(join(dir, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(installed.sort()).toEqual(['@bayou', 'typescript']);
  });

  it('type-checks an ESM consumer with tsc --noEmit and runs it', async () => {
    writeFileSync(join(dir, 'main.ts'), CONSUMER_TS);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          lib: ['ES2022'],
          types: [],
        },
        files: ['main.ts', 'globals.d.ts'],
      }),
    );
    // The consumer's own program needs `process` and `setTimeout`; the client's types need nothing.
    writeFileSync(
      join(dir, 'globals.d.ts'),
      'declare const process: { argv: string[] };\ndeclare function setTimeout(f: (...args: never[]) => void, ms: number): unknown;\n' +
        'declare const console: { log(s: string): void };\n',
    );
    const check = await run(join(dir, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir }).catch((e) => e);
    expect(check.stdout, 'tsc --noEmit output').toBe('');
    // Run the same program (types stripped by tsc's own transpile) against Faye.
    execFileSync(
      join(dir, 'node_modules/.bin/tsc'),
      [
        'main.ts',
        '--outDir',
        'out',
        '--module',
        'NodeNext',
        '--target',
        'ES2022',
        '--skipLibCheck',
        '--noCheck',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    const { stdout } = await run(process.execPath, ['out/main.js', faye.url], { cwd: dir, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toMatchObject({
      state: 'disconnected',
      unknownOption: 'BayouClient: unknown option "noSuchOption"',
      data: { hello: 'world' },
      code: 'BAYOU_ERR_QUEUE_FULL',
    });
  });

  it('runs the IIFE file from the installed package', async () => {
    writeFileSync(join(dir, 'iife.mjs'), IIFE_JS);
    const { stdout } = await run(process.execPath, ['iife.mjs', faye.url], { cwd: dir, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toEqual({ transport: 'done', data: 'from the IIFE' });
  });
});
