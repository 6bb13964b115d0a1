/**
 * A first page on another origin, as a newcomer's is (`bayou start` serves no pages): the
 * IIFE bundle in headless Chromium, on a page served from a second port on loopback. Against
 * a server that does not list the page's origin, the client emits an `error` with the HTTP
 * status and the `--allowed-origins` fix, `connect()` rejects at its deadline, and the
 * server logs the refused origin once; with the origin listed, the same page connects.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { dist, startBayou, waitFor } from './helpers.js';

// Never a silent skip: without Chromium the suite fails and says how to get it.
if (!existsSync(CHROMIUM_PATH)) {
  describe('a page on another origin', () => {
    it('needs Chromium', () => {
      throw new Error(`Chromium not found at ${CHROMIUM_PATH}; the test script installs it through apt-get`);
    });
  });
}

interface PageResult {
  errors: { code: string; status: number | null; message: string }[];
  connect: string;
  state: string;
}

const PAGE = `<!doctype html><meta charset="utf-8"><script src="/bayou.min.js"></script>
<script>
  window.run = (url, options) => new Promise((done) => {
    const result = { errors: [], connect: 'pending', state: '' };
    const client = new Bayou.BayouClient(url, options);
    client.on('error', (e) => result.errors.push({ code: e.code, status: e.status, message: e.message }));
    client.connect().then(
      () => { result.connect = 'resolved'; result.state = client.state; client.disconnect(); done(result); },
      (e) => { result.connect = e.code + ': ' + e.message; result.state = client.state; client.disconnect(); done(result); },
    );
  });
</script>`;

/** The page and the bundle, from a second port: another origin than the server's. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const bundle = readFileSync(dist('bayou.min.js'));
  const server = http.createServer((req, res) => {
    if (req.url === '/bayou.min.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((r) => server.close(() => r())) };
}

// Under CI a missing Chromium fails here (the launch throws), never skips.
const ci = process.env.CI === 'true' || process.env.CI === '1';

describe.runIf(existsSync(CHROMIUM_PATH) || ci)('a page on another origin, in headless Chromium', () => {
  let browser: Browser;
  let pages: Awaited<ReturnType<typeof pageServer>>;
  beforeAll(async () => {
    browser = await chromium.launch(chromiumOptions());
    pages = await pageServer();
  });
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  async function runPage(url: string, options: object): Promise<PageResult> {
    const page = await browser.newPage();
    try {
      await page.goto(`${pages.origin}/`);
      return await page.evaluate(
        ([u, o]) => (window as unknown as { run(u: string, o: object): Promise<PageResult> }).run(u, o),
        [url, options] as const,
      );
    } finally {
      await page.close();
    }
  }

  it('gets an error with the 403 and the --allowed-origins fix, connect() rejects at its deadline, the server logs the origin once', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const server = await startBayou({ logger: { level: 'warn', stream } });
    try {
      const result = await runPage(server.url, {
        connectDeadline: 4000,
        minReconnectDelay: 200,
        maxReconnectDelay: 400,
      });
      expect(result.errors.length).toBeGreaterThan(0);
      const [first] = result.errors;
      expect(first).toMatchObject({ code: 'BAYOU_ERR_UNREACHABLE', status: 403 });
      expect(first?.message).toContain('origin not allowed');
      expect(first?.message).toContain(`--allowed-origins ${pages.origin}`);
      // One error per reason, not one per retry (several retries fit in 4 s at these delays).
      expect(result.errors).toHaveLength(1);
      expect(result.connect).toMatch(
        /^BAYOU_ERR_CONNECT_TIMEOUT: not connected in 4000 ms .*origin not allowed/,
      );
      expect(result.state).toBe('connecting');
      await waitFor(
        () => lines.some((l) => l.includes('refused a page from origin')),
        5000,
        'the refusal logged',
      );
      const logged = lines.filter((l) => l.includes('refused a page from origin'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0] as string)).toMatchObject({ level: 40, origin: pages.origin });
    } finally {
      await server.close();
    }
  });

  it('connects the same page once the server lists its origin', async () => {
    const server = await startBayou({ allowedOrigins: [pages.origin] });
    try {
      const result = await runPage(server.url, { connectDeadline: 10000 });
      expect(result).toMatchObject({ connect: 'resolved', state: 'connected', errors: [] });
    } finally {
      await server.close();
    }
  });
});
