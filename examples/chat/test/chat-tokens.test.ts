/**
 * The chat with tokens, as `bayou start --jwt-secret` runs: handshakes need a token signed
 * with the secret, the chat's `POST /chat/token` issues them, and the user is the token's
 * `sub` whatever name the handshake claims — over the raw wire and in Chromium.
 */
import { SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatServer } from '../src/server/chat-server.js';
import type { ChatMessage } from '../src/shared/chat-protocol.js';
import { launchChromium, RawClient, startChat, waitFor } from './helpers.js';

const secret = 'chat-demo-secret-of-at-least-32-chars';

async function tokenFor(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/chat/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { token: string }).token;
}

describe('chat with tokens', () => {
  let server: ChatServer;
  let url: string;
  let browser: Browser | undefined;
  beforeAll(async () => {
    ({ server, url } = await startChat({ jwtSecret: secret, bayou: { timeout: 500 } }));
  });
  afterAll(async () => {
    await browser?.close();
    await server.close();
  });

  it('refuses a handshake without a token or with a forged one', async () => {
    const none = new RawClient(url);
    expect(await none.handshake('ada')).toMatchObject({ successful: false, error: '403::handshake_denied' });
    const forged = await new SignJWT({ sub: 'ada', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('somebody-elses-secret-of-32-chars!!'));
    expect(await new RawClient(url).handshake('ada', forged)).toMatchObject({
      error: '403::handshake_denied',
    });
    expect(server.bayou.sessionCount).toBe(0);
  });

  it('names the user by the token, not by the name the handshake claims', async () => {
    const ada = new RawClient(url);
    expect(await ada.handshake('mallory', await tokenFor(url, 'ada'))).toMatchObject({ successful: true });
    expect((await ada.subscribe('/chat/lobby')).successful).toBe(true);
    const sent = await ada.request('/service/chat/send', { room: 'lobby', text: 'signed' });
    expect(sent.error).toBeUndefined();
    await ada.until((received) =>
      received.some((m) => (m.data as ChatMessage | undefined)?.text === 'signed'),
    );
    const message = ada.received.map((m) => m.data as ChatMessage).find((d) => d?.text === 'signed');
    expect(message?.user).toBe('ada');
    await ada.disconnect();
  });

  it('refuses to issue a token for an invalid name', async () => {
    const r = await fetch(`${url}/chat/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '' }),
    });
    expect(r.status).toBe(400);
  });

  it('works end to end in the page, which fetches its token at every handshake', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(url);
    await page.fill('#name', 'grace');
    await page.click('#join');
    await page.waitForSelector('#state[data-state="connected"]', { timeout: 10_000 });
    await page.waitForSelector('#members li[data-name="grace"]', { timeout: 10_000 });
    await page.fill('#text', 'with a token');
    await page.press('#text', 'Enter');
    const texts = () =>
      page.$$eval('#messages li.message .text', (spans) => spans.map((s) => s.textContent ?? ''));
    await waitFor(async () => (await texts()).includes('with a token'), 10_000, 'the message in the page');
    // History from the raw client's turn shows too, under the token's name.
    expect(await texts()).toEqual(['signed', 'with a token']);
    const members = await server.bayou.presence.members('/chat/lobby');
    expect(members.map((m) => m.user)).toContain('grace');
    const users = server.chat.rooms.history('lobby').map((m) => m.user);
    expect(users).toEqual(['ada', 'grace']);
  });
});

describe('chat without a secret', () => {
  it('answers 204 on /chat/token (no token needed, no error for the browser to log): an open demo where the name alone is enough', async () => {
    const { server, url } = await startChat();
    expect((await fetch(`${url}/chat/token`, { method: 'POST', body: '{}' })).status).toBe(204);
    const client = new RawClient(url);
    expect(await client.handshake('ada')).toMatchObject({ successful: true });
    await client.disconnect();
    await server.close();
  });
});
