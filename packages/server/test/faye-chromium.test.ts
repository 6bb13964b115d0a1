/**
 * Faye's own browser client (npm `faye`, `client/faye-browser.js`) in headless Chromium with
 * `disable('websocket')`: it picks the `eventsource` connection type Bayou offers, and
 * receives what is published — from the server and from the page itself — also across a
 * recycled stream (the browser's EventSource reopens it and nothing queued is lost).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { type CreateServerOptions, createServer } from '../src/index.js';
import type { Started } from './start-server.js';
import { eventually } from './test-client.js';

const FAYE = readFileSync(createRequire(import.meta.url).resolve('faye/client/faye-browser.js'), 'utf8');

const PAGE = `<!doctype html><meta charset="utf-8"><script src="/faye.js"></script><script>
  window.got = [];
  window.connectionTypes = [];
  const client = new Faye.Client(location.origin + '/bayeux', { timeout: 10 });
  client.disable('websocket');
  client.addExtension({
    incoming(message, callback) {
      if (message.channel === '/meta/handshake' && message.successful) window.clientId = message.clientId;
      callback(message);
    },
    outgoing(message, callback) {
      if (message.channel === '/meta/connect') window.connectionTypes.push(message.connectionType);
      callback(message);
    },
  });
  window.subscribed = client.subscribe('/chrome', (m) => window.got.push(m)).then(() => true);
  window.faye = client;
</script>`;

if (!existsSync(CHROMIUM_PATH)) {
  describe('Faye in Chromium', () => {
    it('needs Chromium', () => {
      throw new Error(
        `Chromium not found at ${CHROMIUM_PATH}; scripts/services.mjs installs it through apt-get`,
      );
    });
  });
}

let browser: Browser | null = null;
let s: Started | null = null;

beforeAll(async () => {
  if (existsSync(CHROMIUM_PATH)) browser = await chromium.launch(chromiumOptions());
});
afterAll(async () => {
  await browser?.close();
  await s?.server.close();
});

async function fayePage(options: CreateServerOptions): Promise<{ page: Page; started: Started }> {
  await s?.server.close();
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    timeout: 5000,
    sweepInterval: 50,
    ...options,
  });
  server.app.get('/faye.js', (_req, reply) => reply.type('text/javascript').send(FAYE));
  server.app.get('/', (_req, reply) => reply.type('text/html').send(PAGE));
  const base = await server.listen();
  s = { server, base };
  const page = await (browser as Browser).newPage();
  await page.goto(`${base}/`);
  await page.waitForFunction(() => (globalThis as unknown as { subscribed: Promise<boolean> }).subscribed);
  return { page, started: s };
}

const received = (page: Page): Promise<unknown[]> =>
  page.evaluate(() => (globalThis as unknown as { got: unknown[] }).got);

const eventSourceGauge = async (base: string): Promise<number> => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('bayou_connections{transport="eventsource"}'));
  return Number(line?.split(' ')[1]);
};

describe('Faye in Chromium with WebSocket disabled', () => {
  it('uses eventsource against Bayou and receives, from the server and from the page', async () => {
    const { page, started } = await fayePage({});
    const clientId = await page.evaluate(() => (globalThis as unknown as { clientId: string }).clientId);
    await eventually(() => started.server.bayou.session(clientId)?.transport === 'eventsource');
    // Its EventSource stream is open (a connect may have named the type a moment before).
    await eventually(async () => (await eventSourceGauge(started.base)) === 1);
    for (let n = 0; n < 5; n++) started.server.bayou.publish('/chrome', { n });
    await page.evaluate(() =>
      (globalThis as unknown as { faye: { publish(c: string, d: unknown): Promise<unknown> } }).faye.publish(
        '/chrome',
        {
          n: 5,
        },
      ),
    );
    await eventually(async () => (await received(page)).length === 6);
    expect(await received(page)).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n })));
    const types = await page.evaluate(
      () => (globalThis as unknown as { connectionTypes: string[] }).connectionTypes,
    );
    // Faye's first connects may leave on long-polling before its EventSource has opened;
    // from the first EventSource connect on, every connect is one.
    const first = types.indexOf('eventsource');
    expect(first, types.join()).toBeGreaterThanOrEqual(0);
    expect(
      types.slice(first).every((t) => t === 'eventsource'),
      types.join(),
    ).toBe(true);
    await page.close();
  });

  it('keeps receiving across recycled streams, losing nothing published in between', async () => {
    const { page, started } = await fayePage({ streamMaxAge: 1000 });
    const clientId = await page.evaluate(() => (globalThis as unknown as { clientId: string }).clientId);
    await eventually(() => started.server.bayou.session(clientId)?.transport === 'eventsource');
    // One message every 100 ms for 3 s: at least two recycles (1 s each, then the browser's 1 s retry).
    for (let n = 0; n < 30; n++) {
      started.server.bayou.publish('/chrome', { n });
      await new Promise((r) => setTimeout(r, 100));
    }
    await eventually(async () => (await received(page)).length === 30, 15_000);
    expect(await received(page)).toEqual([...Array(30).keys()].map((n) => ({ n })));
    expect(started.server.bayou.session(clientId)?.transport).toBe('eventsource');
    await page.close();
  });
});
