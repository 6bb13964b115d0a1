/**
 * The chat a newcomer meets, in headless Chromium: on a 390 px phone nothing overflows
 * sideways, Send and Join are on screen and the member list can be reached (a screenshot for
 * the README); what the page says about a bad name or room, and where; the open demo's token
 * request answered without an error; and two long-polling windows of one browser told why
 * they are slow (the server's multiple-clients advice).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatServer } from '../src/server/chat-server.js';
import { launchChromium, packageDir, startChat, waitFor } from './helpers.js';

let browser: Browser;
let server: ChatServer;
let url: string;
const contexts: BrowserContext[] = [];
/** Responses the pages got with an HTTP error status (a browser logs each in red). */
const failed: string[] = [];

async function phonePage(context?: BrowserContext): Promise<Page> {
  const ctx =
    context ?? (await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true }));
  if (context === undefined) contexts.push(ctx);
  const page = await ctx.newPage();
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(url);
  return page;
}

async function joinChat(page: Page, name: string, longPolling = false): Promise<void> {
  await page.fill('#name', name);
  if (longPolling) await page.check('#join-long-polling');
  await page.click('#join');
  await page.waitForSelector('#state[data-state="connected"]');
}

/** Elements whose right edge is past the viewport's, and how wide the document is. */
function overflow(page: Page): Promise<{ scrollWidth: number; width: number; past: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const past = [...document.querySelectorAll<HTMLElement>('body *')]
      .filter((e) => e.offsetParent !== null && e.getBoundingClientRect().right > width + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${e.className}`);
    return { scrollWidth: document.documentElement.scrollWidth, width, past };
  });
}

async function onScreen(page: Page, selector: string): Promise<void> {
  await page.locator(selector).scrollIntoViewIfNeeded();
  const box = await page.locator(selector).boundingBox();
  expect(box, selector).not.toBeNull();
  expect(box!.x, selector).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, selector).toBeLessThanOrEqual(390);
}

/** Taps the *Members ↓* link and waits for `name` in the list it jumps to. */
async function showMembers(page: Page, name: string): Promise<void> {
  await page.click('a.to-members');
  await page.waitForSelector(`#members li[data-name="${name}"]`, { state: 'visible' });
}

describe('the chat as a newcomer meets it', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    ({ server, url } = await startChat());
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('fits a 390 px phone: nothing overflows sideways, Send and Join on screen, the members reachable', async () => {
    const page = await phonePage();
    expect(await overflow(page)).toMatchObject({ past: [] });
    await onScreen(page, '#join');
    await joinChat(page, 'alice');
    await page.fill('#text', 'hello from a phone');
    await page.click('#send');
    await page.waitForSelector('#messages li.message');
    const layout = await overflow(page);
    expect(layout.past).toEqual([]);
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.width);
    await onScreen(page, '#send');
    await onScreen(page, '#room-form button');
    // The member list is on the page (below the conversation), one tap from its link.
    await page.click('a.to-members');
    await page.waitForSelector('#members li[data-name="alice"]', { state: 'visible' });
    await onScreen(page, '#members li[data-name="alice"]');
    await page.evaluate(() => window.scrollTo(0, 0));
    const png = await page.screenshot();
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // The README's phone screenshot: written when missing or asked for, so test runs leave the tree clean.
    const file = join(packageDir, 'screenshot-phone.png');
    if (!existsSync(file) || process.env.CHAT_SCREENSHOT === '1') writeFileSync(file, png);
  });

  it('carries a private message between two phones: a member tapped from the list below, the answer from the inbox', async () => {
    const texts = (page: Page) =>
      page.$$eval('#messages li.message .text', (spans) => spans.map((s) => s.textContent ?? ''));
    const erin = await phonePage();
    const frank = await phonePage();
    await joinChat(erin, 'erin');
    await joinChat(frank, 'frank');
    await showMembers(erin, 'frank');
    await onScreen(erin, '#members li[data-name="frank"] button');
    await erin.click('#members li[data-name="frank"] button');
    await erin.fill('#text', 'psst, from a phone');
    await onScreen(erin, '#send');
    await erin.click('#send');
    // Frank's inbox lists Erin with an unread message; he opens it and answers.
    const inbox = '#dms li[data-name="erin"]';
    await waitFor(
      async () => (await frank.textContent(inbox))?.includes('1') ?? false,
      10_000,
      'the unread badge',
    );
    await onScreen(frank, `${inbox} button.item`);
    await frank.click(`${inbox} button.item`);
    expect(await texts(frank)).toEqual(['psst, from a phone']);
    await frank.fill('#text', 'got it');
    await frank.click('#send');
    await waitFor(async () => (await texts(erin)).includes('got it'), 10_000, 'the answer');
    expect(await texts(erin)).toEqual(['psst, from a phone', 'got it']);
    for (const page of [erin, frank]) expect((await overflow(page)).past).toEqual([]);
  });

  it('tells the real reason for a bad name, and a bad room by the room input until a room is joined', async () => {
    const page = await phonePage();
    await page.fill('#name', 'bell\u0007');
    await page.click('#join');
    await waitFor(async () => ((await page.textContent('#join-error')) ?? '') !== '', 5000, 'the name error');
    expect(await page.textContent('#join-error')).toBe(
      'Name: no control or text-direction characters, please.',
    );
    await page.fill('#name', 'x'.repeat(30));
    await page.evaluate(() => {
      (document.getElementById('name') as HTMLInputElement).maxLength = 100;
    });
    await page.fill('#name', 'x'.repeat(30));
    await page.click('#join');
    await waitFor(
      async () => (await page.textContent('#join-error'))?.includes('24') === true,
      5000,
      'length error',
    );
    await joinChat(page, 'bob');
    await page.fill('#new-room', 'No Spaces!');
    await page.click('#room-form button');
    await waitFor(async () => ((await page.textContent('#room-error')) ?? '') !== '', 5000, 'the room error');
    expect(await page.textContent('#room-error')).toMatch(/^Room names use a-z, 0-9, - and _/);
    expect(await page.textContent('#composer-error')).toBe('');
    await page.fill('#new-room', 'kitchen');
    await page.click('#room-form button');
    await page.waitForSelector('#rooms li[data-name="kitchen"]');
    expect(await page.textContent('#room-error')).toBe('');
  });

  it('says why two long-polling windows of one browser are slow, and asks the open demo for no token in error', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    contexts.push(context);
    const one = await phonePage(context);
    const two = await phonePage(context);
    await joinChat(one, 'carol', true);
    await joinChat(two, 'dave', true);
    // The browser's second long-poll is told multiple-clients: one of the two pages shows the notice.
    const shown = async (p: Page) => p.isVisible('#slow-notice');
    await waitFor(async () => (await shown(one)) || (await shown(two)), 10_000, 'the slow notice');
    expect(await ((await shown(one)) ? one : two).textContent('#slow-notice')).toMatch(
      /another tab of this browser/,
    );
    // A page on WebSocket is not slowed: switching clears the notice.
    const slowed = (await shown(one)) ? one : two;
    await slowed.uncheck('#force-long-polling');
    await waitFor(async () => !(await shown(slowed)), 10_000, 'the notice gone on WebSocket');
    expect(failed).toEqual([]);
  });
});
