/**
 * `@bayou/client` (its default path: WebSocket, numbered frames) in headless Chromium
 * against a server with `compression` on. Two tabs in separate browser contexts get the
 * same publications in one turn: the second tab's frame is the first's compressed head,
 * shared, with its own ack marker after it in a stored block of the same message — what
 * Chromium's own inflater must read. Both get every message whole and in order, with far
 * fewer bytes on the wire than the JSON.
 */
import { existsSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { startBayou, TestProxy, waitFor } from './helpers.js';

const available = existsSync(CHROMIUM_PATH);

// Never a silent skip: without Chromium the suite fails and says how to get it.
if (!available) {
  describe('compression in Chromium', () => {
    it('needs Chromium under CI', () => {
      throw new Error(`Chromium not found at ${CHROMIUM_PATH}; the test script installs it through apt-get`);
    });
  });
}

describe.runIf(available)('@bayou/client in Chromium with compression on', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch(chromiumOptions());
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('reads frames shared between tabs (a compressed head, its own marker stored after it)', async () => {
    const server = await startBayou({ compression: true });
    const proxy = new TestProxy(`127.0.0.1:${(server.app.server.address() as AddressInfo).port}`, 'pass');
    const base = await proxy.listen();
    const pages: Page[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const page = await (await browser.newContext()).newPage();
        pages.push(page);
        await page.goto(`${base}/test/`);
        await page.evaluate(() =>
          (window as unknown as { startClient(o: object): Promise<void> }).startClient({}),
        );
        await page.evaluate(() =>
          (window as unknown as { subscribe(c: string): Promise<void> }).subscribe('/feed'),
        );
        await waitFor(
          async () =>
            (await page.evaluate(
              () => (window as unknown as { client: { transport: string | null } }).client.transport,
            )) === 'websocket',
          10_000,
          'a WebSocket',
        );
      }
      const upstream = (proxy as unknown as { sockets: Set<Socket> }).sockets;
      const bytesIn = () => [...upstream].reduce((sum, s) => sum + s.bytesRead, 0);
      const before = bytesIn();
      const rows = Array.from({ length: 40 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i, ask: 101 + i }));
      const published = [1, 2, 3].map((n) => ({ n, rows }));
      // One turn: the same frame of three messages for both sessions.
      for (const data of published) server.bayou.publish('/feed', data);
      for (const page of pages) {
        await waitFor(
          async () =>
            (await page.evaluate(() => (window as unknown as { log: { received: unknown[] } }).log.received))
              .length >= 3,
          10_000,
          'three messages',
        );
        const got = await page.evaluate(
          () => (window as unknown as { log: { received: unknown[] } }).log.received,
        );
        expect(got).toEqual(published);
      }
      expect(bytesIn() - before).toBeLessThan((2 * JSON.stringify(published).length) / 4);
      // Read as it came: no socket failed and was opened again (the ack extension would then
      // resend what it carried, whole, and hide a frame Chromium could not inflate).
      expect(proxy.upgrades).toBe(2);
    } finally {
      for (const page of pages) await page.context().close();
      await proxy.close();
      await server.close();
    }
  });
});
