/**
 * Faye's own browser client in headless Chromium against a server with `compression` on:
 * over WebSocket (Chromium offers `permessage-deflate` itself) and over EventSource
 * (Chromium sends `Accept-Encoding: gzip`), it receives what is published, whole and in
 * order, with far fewer bytes on the wire than the JSON carried.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually } from './test-client.js';

const FAYE = readFileSync(createRequire(import.meta.url).resolve('faye/client/faye-browser.js'), 'utf8');

const page = (
  websocket: boolean,
) => `<!doctype html><meta charset="utf-8"><script src="/faye.js"></script><script>
  window.got = [];
  const client = new Faye.Client(location.origin + '/bayeux', { timeout: 10 });
  ${websocket ? '' : "client.disable('websocket');"}
  client.addExtension({
    incoming(message, callback) {
      if (message.channel === '/meta/handshake' && message.successful) window.clientId = message.clientId;
      callback(message);
    },
  });
  window.subscribed = client.subscribe('/feed', (m) => window.got.push(m)).then(() => true);
</script>`;

if (!existsSync(CHROMIUM_PATH)) {
  describe('compression in Chromium', () => {
    it('needs Chromium', () => {
      throw new Error(
        `Chromium not found at ${CHROMIUM_PATH}; scripts/services.mjs installs it through apt-get`,
      );
    });
  });
}

let browser: Browser | null = null;
let server: BayouServer | null = null;
beforeAll(async () => {
  if (existsSync(CHROMIUM_PATH)) browser = await chromium.launch(chromiumOptions());
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const FEED = Array.from({ length: 5 }, (_, n) => ({
  n,
  rows: Array.from({ length: 30 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i + n, ask: 101 + i + n })),
}));

describe.each([
  ['websocket', true],
  ['eventsource', false],
] as const)('Faye in Chromium over %s with compression on', (transport, websocket) => {
  it('receives every message whole, in order, compressed on the wire', async () => {
    await server?.close();
    server = await createServer({ host: '127.0.0.1', port: 0, logger: false, compression: true });
    const sockets: { bytesWritten: number }[] = [];
    server.app.server.on('connection', (socket) => sockets.push(socket));
    server.app.get('/faye.js', (_req, reply) => reply.type('text/javascript').send(FAYE));
    server.app.get('/', (_req, reply) => reply.type('text/html').send(page(websocket)));
    const base = await server.listen();
    const tab: Page = await (browser as Browser).newPage();
    await tab.goto(`${base}/`);
    await tab.waitForFunction(() => (globalThis as unknown as { subscribed: Promise<boolean> }).subscribed);
    const clientId = await tab.evaluate(() => (globalThis as unknown as { clientId: string }).clientId);
    const live = server;
    await eventually(() => live.bayou.session(clientId)?.transport === transport);
    const written = () => sockets.reduce((sum, s) => sum + s.bytesWritten, 0);
    const before = written();
    for (const data of FEED) live.bayou.publish('/feed', data);
    const got = () => tab.evaluate(() => (globalThis as unknown as { got: unknown[] }).got);
    await eventually(async () => (await got()).length === FEED.length);
    expect(await got()).toEqual(FEED);
    const json = FEED.reduce((sum, d) => sum + JSON.stringify(d).length, 0);
    expect(written() - before).toBeLessThan(json / 3);
    await tab.close();
  });
});
