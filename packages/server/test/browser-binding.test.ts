/**
 * The browser binding (`trustClientSession: false`, the default with tokens) on every carrier
 * opened by an HTTP request that names a session: a stranger who learnt a victim's clientId,
 * without the victim's `BAYEUX_BROWSER` cookie, can neither open a stream for that session
 * (it took the victim's stream over and read its messages), nor an EventSource, nor a
 * WebSocket: a session bound to a cookie is refused on a socket whose upgrade did not carry
 * it, while the browser's own socket (which sends the cookie) goes on.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Started, startServer } from './start-server.js';
import { eventually } from './test-client.js';

const secret = 'browser-binding-secret-of-32-chars!!';

describe('the browser binding on streams', () => {
  let started: Started;
  let clientId: string;
  let cookie: string;
  beforeAll(async () => {
    started = await startServer({ auth: { tokens: { secret } }, timeout: 1000 });
    const token = await new SignJWT({ sub: 'victim', exp: Math.ceil(Date.now() / 1000) + 600 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(secret));
    const post = (body: unknown, cookie?: string) =>
      fetch(`${started.base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie === undefined ? {} : { cookie }) },
        body: JSON.stringify(body),
      });
    const hs = await post([
      {
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['streaming', 'eventsource', 'long-polling'],
        ext: { auth: { token } },
      },
    ]);
    cookie = (hs.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^BAYEUX_BROWSER=/);
    clientId = ((await hs.json()) as { clientId: string }[])[0]?.clientId as string;
    await post([{ channel: '/meta/connect', clientId, connectionType: 'long-polling' }], cookie);
    await post([{ channel: '/meta/subscribe', clientId, subscription: '/secret' }], cookie);
  });
  afterAll(() => started.server.close());

  /** Everything a response body says within `ms` (or until it ends). */
  async function bodyWithin(r: Response, ms: number, abort: AbortController): Promise<string> {
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const timer = setTimeout(() => abort.abort(), ms);
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    } catch {
      // aborted: what came so far is the answer
    } finally {
      clearTimeout(timer);
    }
    return text;
  }

  it("refuses a streaming open without the victim's cookie, and reads none of its messages", async () => {
    const abort = new AbortController();
    const r = await fetch(`${started.base}/bayeux/stream`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ channel: '/meta/connect', clientId, connectionType: 'streaming' }]),
    });
    started.server.bayou.publish('/secret', 'for the victim only');
    const text = await bodyWithin(r, 500, abort);
    expect(text).toContain('402::session_unknown');
    expect(text).not.toContain('for the victim only');
    expect(started.server.bayou.session(clientId)?.transport).toBe('long-polling');
  });

  it("refuses an EventSource without the victim's cookie", async () => {
    const abort = new AbortController();
    const r = await fetch(`${started.base}/bayeux/${clientId}`, {
      signal: abort.signal,
      headers: { accept: 'text/event-stream' },
    });
    started.server.bayou.publish('/secret', 'for the victim only');
    const text = await bodyWithin(r, 500, abort);
    expect(text).toContain('402::session_unknown');
    expect(text).not.toContain('for the victim only');
  });

  /** What a WebSocket opened with `headers` answers a connect for the victim's session. */
  async function connectOverWebSocket(headers: Record<string, string>): Promise<Record<string, unknown>[]> {
    const ws = new WebSocket(`${started.base.replace('http', 'ws')}/bayeux`, { headers });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const got: Record<string, unknown>[] = [];
    ws.on('message', (d) => got.push(...(JSON.parse(d.toString()) as Record<string, unknown>[])));
    ws.send(
      JSON.stringify([
        { channel: '/meta/connect', clientId, connectionType: 'websocket', advice: { timeout: 0 } },
      ]),
    );
    await eventually(() => got.some((m) => m.channel === '/meta/connect'), 5_000, 'the connect reply');
    started.server.bayou.publish('/secret', 'for the victim only');
    ws.send(
      JSON.stringify([
        { channel: '/meta/connect', clientId, connectionType: 'websocket', advice: { timeout: 0 } },
      ]),
    );
    await new Promise((r) => setTimeout(r, 200)); // timed on purpose: a delivery that must not come
    ws.terminate();
    return got;
  }

  it("refuses a WebSocket without the victim's cookie, and lets the victim's own socket on", async () => {
    const stranger = await connectOverWebSocket({});
    expect(stranger[0]).toMatchObject({ successful: false, error: '402::session_unknown' });
    expect(JSON.stringify(stranger)).not.toContain('for the victim only');
    const own = await connectOverWebSocket({ cookie });
    expect(own.find((m) => m.channel === '/meta/connect')).toMatchObject({ successful: true });
    expect(own.some((m) => m.data === 'for the victim only')).toBe(true);
  });
});
