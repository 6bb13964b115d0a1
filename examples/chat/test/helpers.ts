/** Shared pieces of the chat tests: the chat server on 127.0.0.1, Chromium, a raw Bayeux client. */
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { type ChatServer, type ChatServerOptions, createChatServer } from '../src/server/chat-server.js';

export const packageDir = fileURLToPath(new URL('..', import.meta.url));
export const publicDir = fileURLToPath(new URL('../dist/public/', import.meta.url));

export async function startChat(
  options: ChatServerOptions = {},
): Promise<{ server: ChatServer; url: string }> {
  const server = await createChatServer({ host: '127.0.0.1', port: 0, publicDir, ...options });
  const url = await server.listen();
  return { server, url };
}

export function portOf(server: ChatServer): number {
  const address = server.app.server.address();
  if (address === null || typeof address !== 'object') throw new Error('not listening');
  return address.port;
}

/** Headless Debian Chromium; a missing browser fails the suite (never a skip, never a download). */
export async function launchChromium(): Promise<Browser> {
  // launch() gives the browser a fresh temporary profile and removes it on close.
  return chromium.launch(chromiumOptions());
}

// The repository's one polling wait, under the name these tests use: (check, ms, what).
export { eventually as waitFor } from '../../../scripts/eventually.mjs';

export type Msg = Record<string, unknown> & {
  channel: string;
  id?: string;
  successful?: boolean;
  data?: unknown;
};

/**
 * A bare long-polling Bayeux client speaking the wire protocol, so tests can send what
 * the page never would (a forged sender, an over-long text, a direct publish).
 */
export class RawClient {
  clientId = '';
  readonly received: Msg[] = [];
  private nextId = 0;
  /** The `BAYEUX_BROWSER` cookie, sent back as a browser would (with tokens a session needs it). */
  private cookie: string | null = null;

  constructor(private readonly base: string) {}

  async post(messages: Record<string, unknown>[]): Promise<Msg[]> {
    const body = messages.map((m) => ({
      id: String(++this.nextId),
      clientId: this.clientId || undefined,
      ...m,
    }));
    const response = await fetch(`${this.base}/bayeux`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.cookie ? { cookie: this.cookie } : {}) },
      body: JSON.stringify(body),
    });
    const set = response.headers.get('set-cookie');
    if (set !== null) this.cookie = set.split(';')[0] as string;
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const replies = (await response.json()) as Msg[];
    for (const m of replies)
      if (!m.channel.startsWith('/meta/') && m.successful === undefined) this.received.push(m);
    return replies;
  }

  async handshake(user: unknown, token?: string): Promise<Msg> {
    const [reply] = await this.post([
      {
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['long-polling'],
        ext: token === undefined ? { chat: { user } } : { chat: { user }, auth: { token } },
      },
    ]);
    if (reply?.successful) {
      this.clientId = reply.clientId as string;
      await this.post([{ channel: '/meta/connect', connectionType: 'long-polling' }]);
    }
    return reply as Msg;
  }

  /** Sends one message; returns every reply to it (a service answers twice: reply, then data). */
  async call(channel: string, fields: Record<string, unknown>): Promise<Msg[]> {
    return this.post([{ channel, ...fields }]);
  }

  /** The answer of a `/service` call: its data, or the error string. */
  async request(channel: string, data: unknown): Promise<{ data?: unknown; error?: string }> {
    const replies = await this.call(channel, { data });
    const failed = replies.find((m) => m.successful === false);
    if (failed !== undefined) return { error: failed.error as string };
    const answer = replies.find((m) => m.successful === true && 'data' in m);
    return { data: answer?.data };
  }

  async subscribe(channel: string): Promise<Msg> {
    const [reply] = await this.call('/meta/subscribe', { subscription: channel });
    return reply as Msg;
  }

  /** Long-polls until some received message satisfies `check`. */
  async until(check: (received: Msg[]) => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!check(this.received)) {
      if (Date.now() > end) throw new Error(`no matching message within ${ms} ms`);
      await this.post([{ channel: '/meta/connect', connectionType: 'long-polling' }]);
    }
  }

  async disconnect(): Promise<void> {
    await this.post([{ channel: '/meta/disconnect' }]).catch(() => undefined);
  }
}
