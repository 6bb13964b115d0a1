/**
 * The 12 tabs that hit the wall over HTTP/1.1 (`shared-connection.test.ts`), not shared,
 * over HTTP/2: `bayou`'s standalone server with TLS (a certificate made for the run) and
 * `http2`, WebSocket off on the server so every tab is on the HTTP fallback. Chromium
 * multiplexes every tab's stream and publishes on one connection: all receive.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@bayou/server';
import { chromium, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { dist, testPage, waitFor } from './helpers.js';

const TABS = 12;
const dir = mkdtempSync(join(tmpdir(), 'bayou-h2-chromium-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function certificate(): { key: Buffer; cert: Buffer } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

describe('12 tabs, not shared, over HTTP/2 (TLS) in Chromium', () => {
  it('all receive a numbered stream exactly once', async () => {
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      https: certificate(),
      http2: true,
      transports: ['streaming', 'long-polling'],
    });
    server.app.get('/test/', (_req, reply) => reply.type('text/html').send(testPage('bayou.min.js')));
    server.app.get('/test/bayou.min.js', (_req, reply) =>
      reply.type('text/javascript').send(readFileSync(dist('bayou.min.js'))),
    );
    const base = await server.listen();
    const browser = await chromium.launch({
      ...chromiumOptions(),
      args: [...chromiumOptions().args, '--ignore-certificate-errors'],
    });
    try {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const pages: Page[] = [];
      for (let i = 0; i < TABS; i++) {
        const page = await context.newPage();
        await page.goto(`${base}/test/`);
        pages.push(page);
      }
      const protocol = await pages[0]?.evaluate(
        () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).nextHopProtocol,
      );
      expect(protocol).toBe('h2');
      for (const page of pages) {
        await page.evaluate(() => {
          const w = window as unknown as {
            startClient(o: object): Promise<void>;
            subscribe(c: string): Promise<void>;
          };
          w.startClient({}).catch(() => {});
          w.subscribe('/feed').catch(() => {});
        });
      }
      await waitFor(() => server.bayou.subscriberCount('/feed') === TABS, 20_000, 'every tab subscribed');
      const n = 40;
      for (let i = 1; i <= n; i++) server.bayou.publish('/feed', i);
      const received = (i: number) =>
        pages[i]?.evaluate(() => (window as unknown as { log: { received: number[] } }).log.received) ??
        Promise.resolve([]);
      for (let i = 0; i < TABS; i++) {
        await waitFor(async () => (await received(i)).includes(n), 15_000, `tab ${i + 1}'s last message`);
        expect(await received(i)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
      }
      expect(server.bayou.sessionCount).toBe(TABS);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
