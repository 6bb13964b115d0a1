// Bayou hello world: publishes the time on /time every second, and serves a plain HTML
// page (index.html) that prints it using @bayou/client's <script> bundle.
//   node server.mjs            → http://127.0.0.1:8080 (PORT and HOST override)
// An open server (no tokens: anyone who reaches it may subscribe and publish), so it
// listens on this machine only unless HOST says otherwise (HOST=0.0.0.0 shares it).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createServer } from '@bayou/server';

const require = createRequire(import.meta.url);
const page = readFileSync(new URL('./index.html', import.meta.url), 'utf8');
// The IIFE bundle of the browser client (global `Bayou`), as a CDN would serve it.
const bundle = readFileSync(require.resolve('@bayou/client/bayou.min.js'), 'utf8');

/** Starts the server; `onPublish` sees every time published (the test uses it). */
export async function startHello({ port = 8080, host = '127.0.0.1', onPublish } = {}) {
  const server = await createServer({ port, host });
  server.app.get('/', (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
  server.app.get('/bayou.min.js', (_request, reply) => reply.type('text/javascript').send(bundle));
  const timer = setInterval(() => {
    const time = new Date().toISOString();
    server.bayou.publish('/time', { time });
    onPublish?.(time);
  }, 1000);
  server.app.addHook('onClose', async () => clearInterval(timer));
  const url = await server.listen();
  return { url, close: () => server.close() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const host = process.env.HOST || '127.0.0.1';
  const { url } = await startHello({ port: Number(process.env.PORT ?? 8080), host });
  const local = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  console.log(
    `Bayou hello world: ${url} (open server: anyone who reaches it may subscribe and publish; ${local ? 'this machine only, HOST=0.0.0.0 shares it' : `listening on ${host}`})`,
  );
}
