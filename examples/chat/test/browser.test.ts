/**
 * The chat page end to end in headless Chromium against the real server: two members in
 * one room, one on WebSocket and one forced onto long-polling; messages both ways; markup
 * shown as text; leaving, a late joiner's history, a closed tab expiring, private messages,
 * the transport switch, and a server restart. The steps share one server and browser.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatServer } from '../src/server/chat-server.js';
import { launchChromium, packageDir, portOf, startChat, waitFor } from './helpers.js';

const XSS = '<img src=x onerror=alert(1)> <script>alert(2)</script> & "quotes"';
/** The late joiner's name is markup too: names are rendered as text like messages. */
const CAROL = '<svg onload=alert(3)>';

let browser: Browser;
let server: ChatServer;
let url: string;
const contexts: BrowserContext[] = [];
const dialogs: string[] = [];
const pageErrors: string[] = [];

async function openPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 640 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(url);
  return page;
}

async function joinAs(page: Page, name: string, room: string, longPolling = false): Promise<void> {
  await page.fill('#name', name);
  await page.fill('#room', room);
  if (longPolling) await page.check('#join-long-polling');
  await page.click('#join');
  await page.waitForSelector('#chat-screen:not([hidden])');
  await page.waitForSelector('#state[data-state="connected"]');
}

const members = (page: Page) => page.$$eval('#members li', (lis) => lis.map((li) => li.dataset.name ?? ''));
const texts = (page: Page) =>
  page.$$eval('#messages li.message .text', (spans) => spans.map((s) => s.textContent ?? ''));
const transport = (page: Page) => page.textContent('#transport');

async function say(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

async function until(page: Page, check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  await waitFor(check, ms, `${what} (${await page.textContent('#me')})`);
}

let alice: Page;
let bob: Page;

describe('chat page in headless Chromium', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    ({ server, url } = await startChat({ bayou: { maxInterval: 1500, sweepInterval: 100 } }));
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('shows two members to each other, one on WebSocket and one on long-polling', async () => {
    alice = await openPage();
    bob = await openPage();
    await joinAs(alice, 'alice', 'lobby');
    await joinAs(bob, 'bob', 'lobby', true);
    expect(await transport(alice)).toBe('websocket');
    expect(await transport(bob)).toBe('long-polling');
    await until(alice, async () => (await members(alice)).includes('bob'), 'bob in alice’s list');
    await until(bob, async () => (await members(bob)).includes('alice'), 'alice in bob’s list');
    expect(await members(alice)).toEqual(['alice', 'bob']);
  });

  it('delivers messages both ways', async () => {
    await say(alice, 'hello from alice (websocket)');
    await until(
      bob,
      async () => (await texts(bob)).includes('hello from alice (websocket)'),
      'alice’s message',
    );
    await say(bob, 'hi alice, bob here (long-polling)');
    await until(
      alice,
      async () => (await texts(alice)).includes('hi alice, bob here (long-polling)'),
      'bob’s message',
    );
    expect(await texts(alice)).toEqual(['hello from alice (websocket)', 'hi alice, bob here (long-polling)']);
  });

  it('shows markup in a message literally and runs none of it', async () => {
    await say(bob, XSS);
    await until(alice, async () => (await texts(alice)).includes(XSS), 'the markup message');
    // No element was made of it: no image whose onerror could fire, no script.
    for (const page of [alice, bob]) {
      expect(await page.$$eval('#messages img, #messages script', (found) => found.length)).toBe(0);
      expect(await page.evaluate(() => document.images.length)).toBe(0);
    }
    await say(alice, 'nice try, bob');
    await until(bob, async () => (await texts(bob)).includes('nice try, bob'), 'the reply');
    await until(alice, async () => (await texts(alice)).includes('nice try, bob'), 'the reply, echoed');
    // A round trip later on both pages, still no dialog.
    expect(dialogs).toEqual([]);
    const png = await alice.screenshot();
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // The README's screenshot: written when missing or asked for, so test runs leave the tree clean.
    const file = join(packageDir, 'screenshot.png');
    if (!existsSync(file) || process.env.CHAT_SCREENSHOT === '1') writeFileSync(file, png);
  });

  it('removes a member who leaves the room from the other member’s list', async () => {
    await bob.click('#rooms li[data-name="lobby"] button.leave');
    await until(alice, async () => !(await members(alice)).includes('bob'), 'bob gone');
    expect(await members(alice)).toEqual(['alice']);
    expect(await alice.$$eval('#messages li.system', (lis) => lis.map((li) => li.textContent))).toContain(
      'bob left',
    );
  });

  it('shows a late joiner the last messages of the room', async () => {
    const carol = await openPage();
    try {
      await joinAs(carol, CAROL, 'lobby');
      await until(carol, async () => (await texts(carol)).length === 4, 'the history');
      expect(await texts(carol)).toEqual([
        'hello from alice (websocket)',
        'hi alice, bob here (long-polling)',
        XSS,
        'nice try, bob',
      ]);
      await until(alice, async () => (await members(alice)).includes(CAROL), 'carol in alice’s list');
      expect(await alice.$$eval('#members li', (lis) => lis.map((li) => li.textContent))).toContain(CAROL);
      expect(await alice.$$eval('#members svg', (found) => found.length)).toBe(0);
      expect(dialogs).toEqual([]);
    } finally {
      // Closing the tab sends nothing: carol leaves when her session expires.
      await carol.context().close();
    }
  });

  it('removes a member whose tab was closed once the session expires', async () => {
    await until(alice, async () => !(await members(alice)).includes(CAROL), 'carol expired', 15_000);
    expect(await members(alice)).toEqual(['alice']);
  });

  it('carries private messages to the addressee only, in both directions', async () => {
    await alice.click('#rooms li[data-name="lobby"] button.item');
    await bob.fill('#new-room', 'lobby');
    await bob.press('#new-room', 'Enter');
    await until(alice, async () => (await members(alice)).includes('bob'), 'bob back');
    await alice.click('#members li[data-name="bob"] button');
    await say(alice, 'just between us');
    await until(
      bob,
      async () => (await bob.textContent('#dms li[data-name="alice"]'))?.includes('1') ?? false,
      'badge',
    );
    await bob.click('#dms li[data-name="alice"] button.item');
    expect(await texts(bob)).toEqual(['just between us']);
    await say(bob, 'sure');
    await until(alice, async () => (await texts(alice)).includes('sure'), 'the private answer');
    expect(await texts(alice)).toEqual(['just between us', 'sure']);
  });

  it('keeps rooms apart, each with its own members and messages, and counts unread ones', async () => {
    await alice.fill('#new-room', 'dev');
    await alice.press('#new-room', 'Enter');
    await until(alice, async () => (await members(alice)).join() === 'alice', 'alice alone in dev');
    await bob.click('#rooms li[data-name="lobby"] button.item');
    await say(bob, 'lobby only');
    await until(
      alice,
      async () => (await alice.textContent('#rooms li[data-name="lobby"] .badge')) === '1',
      'unread',
    );
    expect(await texts(alice)).toEqual([]);
    await bob.fill('#new-room', 'dev');
    await bob.press('#new-room', 'Enter');
    await until(alice, async () => (await members(alice)).join() === 'alice,bob', 'bob in dev');
    await say(bob, 'dev only');
    await until(alice, async () => (await texts(alice)).includes('dev only'), 'the dev message');
    await alice.click('#rooms li[data-name="lobby"] button.item');
    expect(await texts(alice)).toContain('lobby only');
    expect(await texts(alice)).not.toContain('dev only');
    expect(await alice.$$('#rooms .badge')).toHaveLength(0);
  });

  it('switches a connected page to long-polling and keeps its room', async () => {
    await alice.click('#rooms li[data-name="lobby"] button.item');
    await alice.check('#force-long-polling');
    await until(alice, async () => (await transport(alice)) === 'long-polling', 'long-polling');
    await bob.click('#rooms li[data-name="lobby"] button.item');
    await say(bob, 'after the switch');
    await until(
      alice,
      async () => (await texts(alice)).includes('after the switch'),
      'a message after the switch',
    );
    expect(await members(alice)).toEqual(['alice', 'bob']);
  });

  it('reconnects after a server restart and stays in its room', async () => {
    const port = portOf(server);
    await server.close();
    await until(
      alice,
      async () => (await alice.getAttribute('#state', 'data-state')) !== 'connected',
      'lost',
    );
    ({ server, url } = await startChat({ port, bayou: { maxInterval: 1500, sweepInterval: 100 } }));
    for (const page of [alice, bob]) {
      await until(
        page,
        async () => (await page.getAttribute('#state', 'data-state')) === 'connected',
        'back',
        30_000,
      );
    }
    await until(
      alice,
      async () => (await members(alice)).join() === 'alice,bob',
      'both members again',
      15_000,
    );
    await say(bob, 'after the restart');
    await until(
      alice,
      async () => (await texts(alice)).includes('after the restart'),
      'a message after the restart',
    );
    expect(pageErrors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
