// @vitest-environment node
/**
 * The bindings over `@bayou/client/shared` with `sharedConnection: true`, unchanged, in
 * three tabs of one headless Chromium against the real server: each tab renders
 * `useConnectionState`, `useField` on a record subject and `useChannel` on a plain channel
 * through its own `BayouProvider`; the server holds one session and one subscription per
 * subject for the three. The leader tab closed: the others keep rendering every update.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from '@bayou/server';
import { buildSync } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { eventually } from '../../../scripts/eventually.mjs';

const APP = buildSync({
  stdin: {
    contents: `
      import { createElement as h } from 'react';
      import { createRoot } from 'react-dom/client';
      import { BayouClient } from '@bayou/client/shared';
      import { BayouProvider, useChannel, useConnectionState, useField } from '../src/index.js';
      const client = new BayouClient(location.origin + '/bayeux', { sharedConnection: true });
      window.client = client;
      function App() {
        const state = useConnectionState();
        const price = useField('/px/EURUSD', 'bid');
        const chat = useChannel('/chat');
        return h('p', null,
          h('span', { id: 'state' }, state),
          h('span', { id: 'bid' }, String(price.data ?? '-')),
          h('span', { id: 'chat' }, String(chat.data ?? '-')));
      }
      createRoot(document.getElementById('root')).render(h(BayouProvider, { client }, h(App)));
      client.connect().catch(() => {});`,
    resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    loader: 'js',
  },
  bundle: true,
  format: 'iife',
  define: { 'process.env.NODE_ENV': '"production"' },
  write: false,
}).outputFiles[0]?.text as string;

const PAGE = '<!doctype html><meta charset="utf-8"><div id="root"></div><script src="/app.js"></script>';

if (!existsSync(CHROMIUM_PATH)) {
  describe('@bayou/react in shared tabs', () => {
    it('needs Chromium', () => {
      throw new Error(
        `Chromium not found at ${CHROMIUM_PATH}; scripts/services.mjs installs it through apt-get`,
      );
    });
  });
}

let browser: Browser | null = null;
let server: Awaited<ReturnType<typeof createServer>> | null = null;
beforeAll(async () => {
  if (existsSync(CHROMIUM_PATH)) browser = await chromium.launch(chromiumOptions());
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const shown = (page: Page) =>
  page.evaluate(() => ['state', 'bid', 'chat'].map((id) => document.getElementById(id)?.textContent));
const isLeader = (page: Page) =>
  page.evaluate(() => (window as unknown as { client: { isLeader: boolean } }).client.isLeader);

describe('@bayou/react over a shared connection (Chromium)', () => {
  it('three tabs render state, a record field and a channel on one session; the leader closed, the rest go on', async () => {
    server = await createServer({ host: '127.0.0.1', port: 0, records: [{ pattern: '/px/*' }] });
    server.app.get('/app.js', (_req, reply) => reply.type('text/javascript').send(APP));
    server.app.get('/', (_req, reply) => reply.type('text/html').send(PAGE));
    const base = await server.listen();
    const bayou = server.bayou;
    bayou.updateRecord('/px/EURUSD', { bid: 1.1, ask: 1.2 });
    const context = await (browser as Browser).newContext();
    const pages: Page[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await context.newPage();
      page.on('pageerror', (e) => console.error('page error:', e));
      await page.goto(`${base}/`);
      pages.push(page);
    }
    const all = async (pagesNow: Page[], want: string[], what: string) =>
      eventually(
        async () => (await Promise.all(pagesNow.map(shown))).every((s) => s.join() === want.join()),
        15_000,
        what,
      );
    await all(pages, ['connected', '1.1', '-'], 'every tab connected with the snapshot');
    await eventually(() => bayou.subscriberCount('/chat') === 1, 15_000, 'the chat subscription');
    expect(bayou.sessionCount).toBe(1);
    expect(bayou.subscriberCount('/px/EURUSD')).toBe(1);
    bayou.updateRecord('/px/EURUSD', { bid: 1.3 });
    bayou.publish('/chat', 'hello');
    await all(pages, ['connected', '1.3', 'hello'], 'the update and the message in every tab');
    const leaders = await Promise.all(pages.map(isLeader));
    expect(leaders.filter(Boolean)).toHaveLength(1);
    const leader = pages[leaders.indexOf(true)] as Page;
    await leader.close();
    const rest = pages.filter((p) => p !== leader);
    await eventually(
      async () => (await Promise.all(rest.map(isLeader))).some(Boolean),
      15_000,
      'a new leader',
    );
    await all(rest, ['connected', '1.3', 'hello'], 'the rest connected again');
    bayou.updateRecord('/px/EURUSD', { bid: 1.4 });
    bayou.publish('/chat', 'again');
    await all(rest, ['connected', '1.4', 'again'], 'the next update in the other tabs');
    await eventually(() => bayou.sessionCount === 1, 5000, "the old leader's session ended");
    await context.close();
  });
});
