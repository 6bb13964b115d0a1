/**
 * What a server never loads (#36, the empty worker's memory): a second, ES module copy of the
 * OpenTelemetry API (prom-client requires its CommonJS copy for the metrics; the server's
 * tracing shares that one). `jose` and prom-client are imported statically: loaded on first
 * use, they made esbuild put them before the entry in the CommonJS bundle, whose default
 * export attw then no longer found. A child
 * process builds the server from the build (`dist/index.js`) and lists every module it
 * loaded: ES modules through a resolve hook, CommonJS ones through `Module._load`.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = pathToFileURL(resolve(import.meta.dirname, '../dist/index.js')).href;

/** The child: loads the server, builds and closes one (with tokens when asked), prints what it loaded. */
const CHILD = `
import Module, { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const seen = new Set();
const { port1, port2 } = new MessageChannel();
let marked;
const marker = new Promise((r) => { marked = r; });
port1.on('message', (url) => { seen.add(url); if (url.includes('bayou-marker')) marked(); });
const hooks = 'let port; export function initialize(d) { port = d.port; } ' +
  'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }';
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });
const load = Module._load;
Module._load = function (request, ...rest) { seen.add(request); return load.call(this, request, ...rest); };
const { createServer, createAuthHooks } = await import(${JSON.stringify(dist)});
const mode = process.argv[1];
const auth = mode === 'tokens' ? createAuthHooks({ tokens: { secret: 'x'.repeat(32) } }) : undefined;
const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  ...(mode === 'no-metrics' ? { metricsPath: false } : {}),
  ...(auth ? { authenticate: auth.authenticate } : {}),
});
await server.listen();
await server.close();
// The hook reports each module on its own thread: the marker's report comes after the others'.
await import('data:text/javascript,export default "bayou-marker"');
await marker;
port1.close();
console.log(JSON.stringify([...seen]));
`;

function loadedBy(mode: 'default' | 'no-metrics' | 'tokens'): Promise<string[]> {
  const child = spawn('node', ['--input-type=module', '-e', CHILD, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) fail(new Error(`the child exited with ${code}: ${out}`));
      else done(JSON.parse(out.trim().split('\n').at(-1) as string) as string[]);
    });
  });
}

const named = (loaded: string[], pkg: string): string[] =>
  loaded.filter((m) => m === pkg || m.includes(`/node_modules/${pkg}/`));

describe('modules a server does not use', () => {
  it('loads no ES module copy of the OpenTelemetry API without metrics either', async () => {
    const loaded = await loadedBy('no-metrics');
    // The hook saw the server's own modules and its dependencies (the list is real).
    expect(named(loaded, 'ws').length).toBeGreaterThan(0);
    expect(named(loaded, '@opentelemetry/api').filter((m) => m.endsWith('.mjs'))).toEqual([]);
  }, 20_000);

  it('with the metrics on, holds the one CommonJS copy of the OpenTelemetry API prom-client requires', async () => {
    const loaded = await loadedBy('default');
    expect(named(loaded, 'prom-client').length).toBeGreaterThan(0);
    expect(loaded).toContain('@opentelemetry/api');
    expect(named(loaded, '@opentelemetry/api').filter((m) => m.endsWith('.mjs'))).toEqual([]);
  }, 20_000);
});
