/**
 * The IIFE bundle in headless Chromium (Debian's `chromium`, driven by playwright-core),
 * on a page served through a test proxy in front of the real `@bayou/server`: the
 * WebSocket path, a server without WebSocket, a proxy that refuses the upgrade, a proxy
 * that black-holes frames (both end on streaming, the next transport), a server restart, and
 * the move back to WebSocket; and a link
 * that dies mid-session three ways (black hole, one answered probe then silence, only
 * client-to-server traffic): the page is on a working transport within 20 s each time,
 * and a numbered stream published throughout arrives exactly once.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { type ProxyMode, startBayou, TestProxy, waitFor } from './helpers.js';

const available = existsSync(CHROMIUM_PATH);

// Never a silent skip: without Chromium the suite fails and says how to get it.
if (!available) {
  describe('browser tests', () => {
    it('need Chromium under CI', () => {
      throw new Error(`Chromium not found at ${CHROMIUM_PATH}; the test script installs it through apt-get`);
    });
  });
}

type Started = Awaited<ReturnType<typeof startBayou>>;
interface PageLog {
  received: unknown[];
  transports: string[];
  reasons: string[];
  states: string[];
  errors: string[];
  multipleClients: boolean;
}

describe('in headless Chromium', () => {
  let context: BrowserContext;
  let profile: string;
  const cleanup: (() => Promise<unknown> | unknown)[] = [];

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'bayou-chromium-'));
    context = await chromium.launchPersistentContext(profile, chromiumOptions());
  });
  afterAll(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function setup(
    mode: ProxyMode,
    serverOptions: Parameters<typeof startBayou>[0] = {},
  ): Promise<{ server: Started; proxy: TestProxy; page: Page }> {
    const server = await startBayou(serverOptions);
    cleanup.push(() => server.close());
    const proxy = new TestProxy(`127.0.0.1:${(server.app.server.address() as AddressInfo).port}`, mode);
    const base = await proxy.listen();
    cleanup.push(() => proxy.close());
    const page = await context.newPage();
    cleanup.push(() => page.close());
    page.on('pageerror', (e) => console.error('page error:', e));
    await page.goto(`${base}/test/`);
    return { server, proxy, page };
  }

  const log = (page: Page) => page.evaluate(() => (window as unknown as { log: PageLog }).log);
  const start = (page: Page, options: Record<string, unknown> = {}) =>
    page.evaluate(
      (o) => (window as unknown as { startClient(o: object): Promise<void> }).startClient(o),
      options,
    );
  const subscribe = (page: Page, channel: string) =>
    page.evaluate(
      (c) => (window as unknown as { subscribe(c: string): Promise<void> }).subscribe(c),
      channel,
    );
  const transport = (page: Page) =>
    page.evaluate(() => (window as unknown as { client: { transport: string | null } }).client.transport);
  const received = async (page: Page) => (await log(page)).received;

  /**
   * Publishes 1, 2, 3... on `/feed` every 25 ms until stopped; `stop` publishes one more
   * and returns the last number.
   */
  function stream(server: Started): { stop(): number } {
    let n = 0;
    const timer = setInterval(() => server.bayou.publish('/feed', ++n), 25);
    return {
      stop() {
        clearInterval(timer);
        server.bayou.publish('/feed', ++n);
        return n;
      },
    };
  }

  /** Waits for `count` more messages than the page has now: the stream runs that long. */
  async function flowing(page: Page, count: number): Promise<void> {
    const now = (await received(page)).length;
    await waitFor(async () => (await received(page)).length >= now + count, 25_000, `${count} messages`);
  }

  /** Every number 1…n once: waits for the last one (nothing comes after it), then counts. */
  async function exactlyOnce(page: Page, n: number): Promise<void> {
    await waitFor(async () => (await received(page)).includes(n), 25_000, `message ${n}`);
    const got = (await received(page)) as number[];
    expect(got.length).toBe(n);
    expect([...got].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  }

  it('1. uses WebSocket: subscribe, publish, receive', async () => {
    const { page } = await setup('pass');
    await start(page);
    await subscribe(page, '/chat/*');
    await page.evaluate(() =>
      (window as unknown as { client: { publish(c: string, d: unknown): Promise<void> } }).client.publish(
        '/chat/room',
        'hello from the page',
      ),
    );
    await waitFor(async () => (await received(page)).length === 1, 5000, 'the message');
    expect(await received(page)).toEqual(['hello from the page']);
    expect(await transport(page)).toBe('websocket');
  });

  it('2. ends up on long-polling when the server has WebSocket disabled, and works', async () => {
    const { server, page } = await setup('pass', { transports: ['long-polling'] });
    await start(page);
    expect(await transport(page)).toBe('long-polling');
    await subscribe(page, '/feed');
    server.bayou.publish('/feed', 'over long-polling');
    await waitFor(async () => (await received(page)).length === 1, 5000, 'the message');
  });

  it('3. falls back to streaming within 6 s when a proxy refuses the upgrade', async () => {
    const { server, proxy, page } = await setup('refuse-upgrade');
    const t0 = Date.now();
    await start(page);
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(proxy.upgrades).toBeGreaterThan(0);
    expect(await transport(page)).toBe('streaming');
    await subscribe(page, '/feed');
    server.bayou.publish('/feed', 'through the proxy');
    await waitFor(async () => (await received(page)).length === 1, 5000, 'the message');
  });

  it('4. detects a proxy that upgrades then drops every frame, and falls back', async () => {
    const { server, page } = await setup('blackhole');
    await start(page);
    expect(await transport(page)).toBe('streaming');
    await subscribe(page, '/feed');
    server.bayou.publish('/feed', 'despite the black hole');
    await waitFor(async () => (await received(page)).length === 1, 5000, 'the message');
  });

  it('5. reconnects, re-handshakes and resubscribes by itself when the server restarts', async () => {
    const { server, page } = await setup('pass');
    const port = (server.app.server.address() as AddressInfo).port;
    await start(page);
    await subscribe(page, '/news');
    await server.close();
    await waitFor(async () => (await log(page)).states.includes('reconnecting'), 5000, 'reconnecting');
    const again = await startBayou({ port });
    cleanup.push(() => again.close());
    await waitFor(async () => (await log(page)).states.at(-1) === 'connected', 15_000, 'connected again');
    await waitFor(async () => again.bayou.subscriberCount('/news') === 1, 5000, 'the resubscription');
    again.bayou.publish('/news', 'after the restart');
    await waitFor(async () => (await received(page)).includes('after the restart'), 5000, 'the message');
  });

  it('follows the multiple-clients advice when two tabs of one browser long-poll, and both receive', async () => {
    const { server, page } = await setup('pass', { transports: ['long-polling'] });
    const second = await context.newPage();
    cleanup.push(() => second.close());
    await second.goto(page.url());
    // With acknowledgements on (the default): the tab answered with multiple-clients
    // advice gets its messages in those connect replies.
    await start(page);
    await start(second);
    await subscribe(page, '/tabs');
    await subscribe(second, '/tabs');
    // Both tabs carry the same BAYEUX_BROWSER cookie; the server lets one of them hold a poll.
    const cookies = await context.cookies(page.url());
    expect(cookies.some((c) => c.name === 'BAYEUX_BROWSER')).toBe(true);
    server.bayou.publish('/tabs', 'to both tabs');
    await waitFor(async () => (await received(page)).length === 1, 5000, 'the first tab');
    await waitFor(async () => (await received(second)).length === 1, 5000, 'the second tab');
    expect([await transport(page), await transport(second)]).toEqual(['long-polling', 'long-polling']);
    // The server allows one held poll per browser: the other tab was told to poll instead.
    await waitFor(
      async () => (await log(page)).multipleClients || (await log(second)).multipleClients,
      5000,
      'the multiple-clients advice',
    );
  });

  it('6. moves back to WebSocket when the proxy lets it through, losing and repeating nothing', async () => {
    const { server, proxy, page } = await setup('refuse-upgrade');
    await start(page, { minProbeDelay: 500, maxProbeDelay: 1000 });
    expect(await transport(page)).toBe('streaming');
    await subscribe(page, '/feed');
    proxy.mode = 'pass';
    let n = 0;
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      server.bayou.publish('/feed', ++n);
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(async () => (await log(page)).transports.length === 2, 5000, 'the move to WebSocket');
    // One more on the same path, after the move: once it is in, a late copy would be too.
    server.bayou.publish('/feed', ++n);
    await waitFor(async () => (await received(page)).includes(n), 5000, 'the last message');
    const got = (await received(page)) as number[];
    expect((await log(page)).transports).toEqual(['streaming', 'websocket']);
    expect(new Set(got).size).toBe(got.length);
    expect([...got].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  });

  describe('a link that dies mid-session (default deadLinkTimeout: 20 s)', () => {
    /** Waits until the page is connected on the fallback, streaming; returns how long that took. */
    async function backOnFallback(page: Page, since: number): Promise<number> {
      await waitFor(
        async () => {
          const l = await log(page);
          return l.transports.at(-1) === 'streaming' && l.states.at(-1) === 'connected';
        },
        25_000,
        'a working transport',
      );
      return Date.now() - since;
    }

    // With maxInterval 30 s the session outlives the detection and the ack extension resends
    // what the dead link swallowed. In the expiring case the server answers a held connect
    // within 2 s (with ack frames on, deliveries no longer answer it), the next connect is
    // swallowed, and a maxInterval of 3 s ends the session well before the client gives the
    // link up; the replay extension then recovers the stream (a history large enough).
    // The idle heartbeat every 4 s keeps the watchdog at its 20 s (2.5 × 4 s is less); with
    // the default 30 s the client would give a silent link up within 67.5 s instead. In the
    // expiring case the server closes the silent socket after two unanswered heartbeats.
    const serverOptions = { maxInterval: 30_000, heartbeatInterval: 4_000 };
    const expiring = { historySize: 2000, timeout: 2_000, maxInterval: 3_000, heartbeatInterval: 4_000 };

    it.each([
      ['goes into a black hole (acks)', 'blackhole', serverOptions, false],
      ['passes only client-to-server traffic (acks)', 'client-to-server', serverOptions, false],
      ['goes into a black hole and its session expires (replay)', 'blackhole', expiring, true],
    ] as const)(
      '7. a WebSocket that %s mid-session',
      async (_what, mode, options, newSession) => {
        const { server, proxy, page } = await setup('pass', options);
        await start(page);
        expect(await transport(page)).toBe('websocket');
        const clientId = () =>
          page.evaluate(() => (window as unknown as { client: { clientId: string | null } }).client.clientId);
        const session = await clientId();
        await subscribe(page, '/feed');
        const feed = stream(server);
        await flowing(page, 40);
        proxy.mode = mode;
        const elapsed = await backOnFallback(page, Date.now());
        expect(elapsed).toBeLessThan(20_000);
        expect((await clientId()) !== session).toBe(newSession);
        await flowing(page, 40);
        await exactlyOnce(page, feed.stop());
      },
      60_000,
    );

    it('8. a WebSocket that answers one probe then goes silent', async () => {
      // Without the heartbeat: it would close the silent socket first (after two unanswered
      // pings), this proxy would pass that close on, and the client would take it for an
      // ordinary cut and try WebSocket again instead of setting it aside (server README).
      const { server, proxy, page } = await setup('refuse-upgrade', {
        ...serverOptions,
        heartbeatInterval: 0,
      });
      await start(page, { minProbeDelay: 500 });
      expect(await transport(page)).toBe('streaming');
      await subscribe(page, '/feed');
      const feed = stream(server);
      await flowing(page, 20);
      proxy.mode = 'one-frame';
      await waitFor(async () => (await log(page)).transports.includes('websocket'), 10_000, 'the probe');
      const switched = Date.now();
      const elapsed = await backOnFallback(page, switched);
      expect(elapsed).toBeLessThan(20_000);
      // No more probes get through from here: the page stays where it works.
      proxy.mode = 'refuse-upgrade';
      await flowing(page, 40);
      await exactlyOnce(page, feed.stop());
      expect((await log(page)).transports.at(-1)).toBe('streaming');
    }, 60_000);
  });
  describe('the streaming transport through real proxies (issue #23)', () => {
    it('(a) a proxy refusing WebSocket: the page ends on streaming and a numbered stream arrives exactly once', async () => {
      const { server, proxy, page } = await setup('refuse-upgrade');
      await start(page);
      expect(await transport(page)).toBe('streaming');
      expect((await log(page)).reasons).toEqual(['failed']);
      await subscribe(page, '/feed');
      const feed = stream(server);
      await flowing(page, 80);
      await exactlyOnce(page, feed.stop());
      // One response carried the whole stream (the server recycles after 60 s).
      expect(proxy.streams).toBe(1);
      expect((await log(page)).transports).toEqual(['streaming']);
    }, 60_000);

    it('(a) ... and through the recycles of a server that ends each stream after 4 KB', async () => {
      const { server, proxy, page } = await setup('refuse-upgrade', { streamMaxBytes: 4096 });
      await start(page);
      await subscribe(page, '/feed');
      const feed = stream(server);
      await flowing(page, 80);
      await exactlyOnce(page, feed.stop());
      expect(proxy.streams).toBeGreaterThan(2);
      expect((await log(page)).states.filter((s) => s === 'reconnecting')).toEqual([]);
    }, 60_000);

    it('(b) a proxy that buffers response bodies: the page detects it and ends on long-polling, which works', async () => {
      const { server, proxy, page } = await setup('refuse-upgrade');
      proxy.bufferBodies = true;
      const t0 = Date.now();
      await start(page);
      // The stream's first bytes never came within streamSenseTimeout (3 s by default).
      expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
      expect(await transport(page)).toBe('long-polling');
      expect((await log(page)).reasons).toEqual(['buffered']);
      expect(proxy.streams).toBe(1);
      await subscribe(page, '/feed');
      const feed = stream(server);
      await flowing(page, 40);
      await exactlyOnce(page, feed.stop());
      expect(proxy.streams).toBe(1);
    }, 60_000);

    it('(d) streams cut mid-flight by the proxy (both sides dropped) lose nothing and repeat nothing', async () => {
      const { server, proxy, page } = await setup('refuse-upgrade');
      await start(page);
      await subscribe(page, '/feed');
      const feed = stream(server);
      for (let cut = 0; cut < 3; cut++) {
        await flowing(page, 20);
        expect(proxy.cutStreams()).toBe(1);
      }
      await flowing(page, 20);
      await exactlyOnce(page, feed.stop());
      expect(proxy.streams).toBe(4);
      // Each cut is a reconnect (on streaming again, the same session), and only that.
      const l = await log(page);
      expect(l.states.filter((s) => s === 'reconnecting')).toHaveLength(3);
      expect(l.transports).toEqual(['streaming', 'streaming', 'streaming', 'streaming']);
    }, 60_000);
  });
});
