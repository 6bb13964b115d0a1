/**
 * The CometD JavaScript client (npm `cometd` 9, bundled for the page with esbuild) in 8
 * tabs of one headless Chromium, long-polling over HTTP/1.1: past `maxSessionsPerBrowser`
 * held long-polls (the `BAYEUX_BROWSER` cookie the tabs share) the extra tabs are told
 * `multiple-clients` and poll every `multiSessionInterval`, as CometD's server does, so
 * the tabs do not exhaust the browser's 6 connections: all of them receive a numbered
 * stream exactly once, and each extra tab waited the advised interval before polling again.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually } from './test-client.js';

const TABS = 8;
const INTERVAL = 500;

const COMETD = buildSync({
  stdin: {
    contents: "import * as cometd from 'cometd'; window.org_cometd = cometd;",
    resolveDir: fileURLToPath(new URL('..', import.meta.url)),
  },
  bundle: true,
  format: 'iife',
  write: false,
}).outputFiles[0]?.text as string;

const PAGE = `<!doctype html><meta charset="utf-8"><script src="/cometd.js"></script><script>
  window.got = [];
  window.advised = 0;
  window.waits = [];
  const cometd = new org_cometd.CometD();
  cometd.unregisterTransport('websocket');
  cometd.configure({ url: location.origin + '/bayeux', logLevel: 'warn' });
  let advisedAt = null;
  cometd.registerExtension('probe', {
    incoming(m) {
      if (m.channel === '/meta/connect' && m.advice && m.advice['multiple-clients']) {
        window.advised++;
        window.interval = m.advice.interval;
        advisedAt = performance.now();
      }
      return m;
    },
    outgoing(m) {
      if (m.channel === '/meta/connect' && advisedAt !== null) {
        window.waits.push(performance.now() - advisedAt);
        advisedAt = null;
      }
      return m;
    },
  });
  cometd.handshake((h) => {
    if (h.successful) cometd.subscribe('/feed', (m) => window.got.push(m.data));
  });
</script>`;

if (!existsSync(CHROMIUM_PATH)) {
  describe('CometD in Chromium', () => {
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

const read = <T>(page: Page, name: string): Promise<T> =>
  page.evaluate((n) => (globalThis as unknown as Record<string, T>)[n] as T, name);

describe('the CometD JS client in 8 tabs, long-polling over HTTP/1.1', () => {
  it('all receive; the extra tabs are advised multiple-clients and poll at the advised interval', async () => {
    server = await createServer({
      host: '127.0.0.1',
      port: 0,
      transports: ['long-polling'],
      timeout: 3000,
      maxSessionsPerBrowser: 1,
      multiSessionInterval: INTERVAL,
    });
    server.app.get('/cometd.js', (_req, reply) => reply.type('text/javascript').send(COMETD));
    server.app.get('/', (_req, reply) => reply.type('text/html').send(PAGE));
    const base = await server.listen();
    const context = await (browser as Browser).newContext();
    const pages: Page[] = [];
    for (let i = 0; i < TABS; i++) {
      const page = await context.newPage();
      await page.goto(`${base}/`);
      pages.push(page);
    }
    const bayou = server.bayou;
    await eventually(() => bayou.subscriberCount('/feed') === TABS, 15_000);
    const n = 20;
    for (let i = 1; i <= n; i++) bayou.publish('/feed', i);
    for (const page of pages) {
      await eventually(async () => (await read<number[]>(page, 'got')).includes(n), 15_000);
      expect(await read<number[]>(page, 'got')).toEqual(Array.from({ length: n }, (_, k) => k + 1));
    }
    // One tab holds the browser's long-poll at a time; the others were told to poll.
    const advised = await Promise.all(pages.map((p) => read<number>(p, 'advised')));
    expect(advised.filter((a) => a > 0).length).toBeGreaterThanOrEqual(TABS / 2);
    expect(bayou.stats().heldLongPolls).toBeLessThanOrEqual(1);
    const waits = (await Promise.all(pages.map((p) => read<number[]>(p, 'waits')))).flat();
    expect(waits.length).toBeGreaterThan(0);
    // The client waits the advised interval after each such reply before it polls again.
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(INTERVAL * 0.9);
    const intervals = await Promise.all(pages.map((p) => read<number | undefined>(p, 'interval')));
    expect(new Set(intervals.filter((i) => i !== undefined))).toEqual(new Set([INTERVAL]));
    const sorted = [...waits].sort((a, b) => a - b);
    console.log(
      `${advised.filter((a) => a > 0).length} of ${TABS} tabs advised; wait after the advice: min ${Math.round(sorted[0] ?? 0)} ms, median ${Math.round(sorted[sorted.length >> 1] ?? 0)} ms (interval ${INTERVAL})`,
    );
    await context.close();
  });
});
