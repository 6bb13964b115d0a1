/**
 * The operator's console in headless Chromium against a real cluster: three
 * `bayou start --redis --admin` processes behind the round-robin balancer, so the page,
 * its login and its Bayeux connection land on different nodes. A wrong password is
 * refused; the console shows the three nodes and the rates of a real `bayou-loadtest chat`
 * run; it publishes a message a test client receives and ends that client's session. The
 * screenshots in the README (docs/admin-console*.png) are taken here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BayouClient, type WebSocketConstructor, websocket } from '@bayou/client';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { startBayou } from './bayou-process.js';
import { disconnectAll, eventually, redisPerFile, requireRedis } from './cluster-helpers.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';

const PASSWORD = 'console-test-password';
const LOADTEST = resolve(import.meta.dirname, '../../loadtest/bin/bayou-loadtest.js');
// The README's pictures are rewritten only when asked (UPDATE_SCREENSHOTS=1); otherwise
// the same shots go to a temporary directory, so a test run leaves the tree as it was.
const DOCS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? resolve(import.meta.dirname, '../docs')
    : mkdtempSync(join(tmpdir(), 'bayou-console-shots-'));

requireRedis('the operator console on a 3-node cluster');
if (!existsSync(CHROMIUM_PATH)) {
  describe('the operator console in Chromium', () => {
    it('needs Chromium', () => {
      throw new Error(
        `Chromium not found at ${CHROMIUM_PATH}; scripts/services.mjs installs it through apt-get`,
      );
    });
  });
}

const redis = redisPerFile();
const children: ChildProcess[] = [];
const clients: BayouClient[] = [];
let balancer: RoundRobinBalancer | null = null;
let browser: Browser | null = null;

afterAll(async () => {
  await disconnectAll(clients);
  await browser?.close();
  await balancer?.close();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/**
 * What does not fit, as an operator would see it: a card whose content is wider than the
 * card (cut, or scrolled sideways), a form whose controls wrap to a second line or stick out.
 */
// Runs in the page (as text: this package's tests are typed without the DOM).
const OVERFLOWING = `(() => {
  const out = [];
  for (const section of document.querySelectorAll('section')) {
    const name = section.querySelector('h2')?.textContent ?? '?';
    if (section.scrollWidth > section.clientWidth + 1)
      out.push(name + ': content ' + section.scrollWidth + ' px in a ' + section.clientWidth + ' px card');
    for (const form of section.querySelectorAll('form')) {
      const controls = [...form.querySelectorAll('input, button')];
      if (new Set(controls.map((c) => c.offsetTop)).size > 1) out.push(name + ': the ' + form.id + ' form wraps');
      const right = Math.max(...controls.map((c) => c.getBoundingClientRect().right));
      if (right > form.getBoundingClientRect().right + 1) out.push(name + ': the ' + form.id + ' form sticks out');
    }
  }
  return out;
})()`;
const overflowing = (page: Page): Promise<string[]> => page.evaluate(OVERFLOWING);

const numberIn = async (page: Page, selector: string) =>
  Number(((await page.locator(selector).textContent()) ?? '').replace(/,/g, ''));

/** Three `bayou start --redis --admin` nodes behind the balancer; resolves with its base URL. */
async function startConsoleCluster(): Promise<string> {
  const prefix = `admin-console-${process.pid}:`;
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) {
    const node = await startBayou([
      '--port',
      '0',
      '--redis',
      redis().url,
      '--redis-prefix',
      prefix,
      '--admin',
      '--admin-password',
      PASSWORD,
      '--log-level',
      'warn',
    ]);
    children.push(node.child);
    ports.push(node.port);
  }
  balancer = await RoundRobinBalancer.start(ports.map((port, i) => ({ name: `node${i}`, port })));
  return balancer.base;
}

/** A real chat load through the balancer: 30 clients in 10 rooms, 400 messages/s for 20 s. */
function startLoad(base: string): { child: ChildProcess; output(): string } {
  const args = ['chat', '--url', `${base}/bayeux`, '--clients', '30', '--rooms', '10'];
  args.push('--rooms-per-client', '2', '--rate', '400', '--duration', '20s');
  const child = spawn('node', [LOADTEST, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return { child, output: () => out };
}

describe('the operator console in Chromium', () => {
  it('logs in, shows a 3-node cluster under load, publishes to a client and ends its session', async () => {
    const base = await startConsoleCluster();

    browser = await chromium.launch(chromiumOptions());
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${base}/admin`);
    await page.fill('#password', 'not the password');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/admin/login')),
      page.click('button[type=submit]'),
    ]);
    expect(refused.status()).toBe(401);
    await page.getByRole('alert').filter({ hasText: 'Wrong password.' }).waitFor();
    expect(await page.locator('#nodes').count()).toBe(0);

    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.locator('#nodes tr[data-node]').nth(2).waitFor({ timeout: 15_000 });
    await page.locator('#status', { hasText: 'connected' }).waitFor();
    // Each node reaches Redis.
    await eventually(async () =>
      expect(await page.locator('#nodes tr[data-node] td:last-child').allTextContents()).toEqual([
        'ok',
        'ok',
        'ok',
      ]),
    );

    const load = startLoad(base);
    await eventually(async () => {
      expect(load.child.exitCode, load.output()).toBeNull();
      expect(await numberIn(page, '#rate-published')).toBeGreaterThan(100);
      expect(await numberIn(page, '#rate-delivered')).toBeGreaterThan(100);
      // 30 load sessions (and the console's) spread over the three nodes.
      const sessions = await page.locator('#nodes tr[data-node] td:nth-child(2)').allTextContents();
      expect(sessions.map(Number).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(31);
    }, 20_000);
    await eventually(
      async () => expect(await page.locator('#channels').textContent()).toMatch(/\/chat\/\d+.*\/s/),
      10_000,
    );
    await eventually(async () =>
      expect(await page.locator('#channels tbody tr').count()).toBeGreaterThanOrEqual(5),
    );
    // timed on purpose: a few seconds of chart before the picture (time is what the chart shows)
    await page.waitForTimeout(5000);
    await page.screenshot({ path: resolve(DOCS, 'admin-console.png') });
    // Every card fits, on the README's width and on a wider screen with three columns.
    expect(await overflowing(page)).toEqual([]);
    await page.setViewportSize({ width: 1440, height: 860 });
    expect(await overflowing(page)).toEqual([]);
    // Every transport is counted (the load runs over WebSocket and long-polling).
    expect(await page.locator('#nodes tr[data-node] td:nth-child(3)').first().textContent()).toMatch(
      /ws · \d+ stream · \d+ sse · \d+ lp/,
    );
    expect(await page.locator('#channels').textContent()).not.toContain('/bayou/admin');
    await page.setViewportSize({ width: 1280, height: 860 });

    const listener = new BayouClient(`${base}/bayeux`, {
      transports: [websocket],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    clients.push(listener);
    await listener.connect();
    const received: unknown[] = [];
    await listener.subscribe('/ops/notice', (m) => received.push(m.data)).ready;

    await page.fill('#publish input[name=channel]', '/ops/notice');
    await page.fill('#publish input[name=data]', '{"text":"maintenance at 18:00"}');
    await page.click('#publish button');
    await eventually(() => expect(received).toEqual([{ text: 'maintenance at 18:00' }]));
    await page.locator('#result', { hasText: 'published to /ops/notice' }).waitFor();

    await page.fill('#inspect input[name=channel]', '/ops/notice');
    await page.click('#inspect button');
    await page.locator('#inspected', { hasText: 'maintenance at 18:00' }).waitFor();

    const clientId = listener.clientId as string;
    await page.fill('#disconnect input[name=target]', clientId);
    await page.click('#disconnect button');
    await page.locator('#result', { hasText: `${clientId}: 1 session(s) ended` }).waitFor();
    await eventually(() => expect(listener.state).toBe('disconnected'));
    const box = await page.locator('section:has(#inspect)').boundingBox();
    if (box === null) throw new Error('the channel section is not shown');
    await page.screenshot({
      path: resolve(DOCS, 'admin-console-actions.png'),
      clip: { x: 0, y: box.y - 10, width: 1280, height: box.height + 20 },
    });

    expect(
      await new Promise((done) =>
        load.child.exitCode !== null ? done(load.child.exitCode) : load.child.once('exit', done),
      ),
    ).toBe(0);
  }, 120_000);
});
