/**
 * The long-polling endpoint's direct path (src/http/direct-endpoint.ts): taken only when no
 * app hook could see the endpoint's requests, and then answering as the Fastify route does —
 * cookies, form bodies, refusals, and `request.ip`/`secure` under `trustProxy`. With an app
 * hook the endpoint stays in Fastify, so `onRequest` hooks keep refusing long-polls.
 */
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { servedDirectly, TRUST_RULE_FASTIFY } from '../src/http/direct-endpoint.js';
import { bayou } from '../src/index.js';
import type { RequestInfo } from '../src/types.js';

const HANDSHAKE = JSON.stringify([
  { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
]);

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function start(
  setup: (app: FastifyInstance) => void = () => undefined,
  fastify: FastifyServerOptions = {},
  seen: RequestInfo[] = [],
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify(fastify);
  apps.push(app);
  setup(app);
  await app.register(bayou, {
    authenticate: (_m, request) => {
      seen.push(request);
      return true;
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/bayeux` };
}

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

describe('the long-polling direct path', () => {
  it('is taken without app hooks and answers as the Fastify route does', async () => {
    const { app, url } = await start();
    expect(servedDirectly(app)).toBe(true);

    const first = await post(url, HANDSHAKE);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json;charset=utf-8');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^BAYEUX_BROWSER=[\w-]+; Path=\/; HttpOnly; SameSite=Lax$/);
    const [reply] = (await first.json()) as Array<{ successful: boolean; clientId: string }>;
    expect(reply?.successful).toBe(true);

    // A browser that has the cookie is not given another; a form-encoded body works too.
    const again = await fetch(`${url}/handshake?x=1`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `other=1; ${cookie.split(';')[0]}`,
      },
      body: `message=${encodeURIComponent(HANDSHAKE)}`,
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(((await again.json()) as Array<{ successful: boolean }>)[0]?.successful).toBe(true);

    const refusals: Array<[Promise<Response>, number, RegExp]> = [
      [post(url, '[{"channel":'), 400, /malformed JSON/],
      [post(url, `${'['.repeat(100)}${']'.repeat(100)}`), 400, /nested deeper/],
      [post(url, 'x'.repeat(70_000)), 413, /413:65536:message_too_large/],
      [post(url, HANDSHAKE, { 'content-type': 'application/xml' }), 415, /Unsupported Media Type/],
      [post(url, HANDSHAKE, { origin: 'http://evil.example' }), 403, /origin not allowed/],
    ];
    for (const [answer, status, body] of refusals) {
      const r = await answer;
      expect(r.status).toBe(status);
      expect(await r.text()).toMatch(body);
    }
    // The app's other routes are still Fastify's.
    expect((await fetch(url.replace('/bayeux', '/nowhere'))).status).toBe(404);
  });

  it('serves EventSource streams directly too (Fastify routes none of them), and through Fastify with a hook', async () => {
    for (const hooked of [false, true]) {
      let routed = 0;
      const { app, url } = await start(
        (a) => {
          if (hooked) a.addHook('onRequest', async () => undefined);
        },
        { genReqId: () => String(++routed) },
      );
      const handshake = JSON.stringify([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['eventsource', 'long-polling'],
        },
      ]);
      const first = await post(url, handshake);
      const [reply] = (await first.json()) as Array<{ clientId: string }>;
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const abort = new AbortController();
      const stream = await fetch(`${url}/${reply?.clientId}`, {
        headers: { accept: 'text/event-stream', cookie },
        signal: abort.signal,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const chunk = await stream.body?.getReader().read();
      expect(new TextDecoder().decode(chunk?.value).startsWith(':  ')).toBe(true);
      abort.abort();
      // Fastify names each request it routes: none on the direct path, the POST and the GET without it.
      expect([servedDirectly(app), routed]).toEqual(hooked ? [false, 2] : [true, 0]);
    }
  });

  it('stays in Fastify when the app has an onRequest hook, so the hook can refuse long-polls', async () => {
    const { app, url } = await start((a) =>
      a.addHook('onRequest', async (req, reply) => {
        if (req.headers['x-token'] !== 'ok') return reply.code(401).send({ error: 'token required' });
      }),
    );
    expect(servedDirectly(app)).toBe(false);
    expect((await post(url, HANDSHAKE)).status).toBe(401);
    expect((await post(url, HANDSHAKE, { 'x-token': 'ok' })).status).toBe(200);
  });

  it('stays in Fastify for any other request hook, e.g. onResponse', async () => {
    const logged: string[] = [];
    const { app, url } = await start((a) =>
      a.addHook('onResponse', async (req) => {
        logged.push(req.url);
      }),
    );
    expect(servedDirectly(app)).toBe(false);
    expect((await post(url, HANDSHAKE)).status).toBe(200);
    expect(logged).toContain('/bayeux');
  });

  it("gives hooks Fastify's request.ip and protocol under trustProxy", async () => {
    const seen: RequestInfo[] = [];
    const { app, url } = await start(() => undefined, { trustProxy: '127.0.0.1' }, seen);
    expect(servedDirectly(app)).toBe(true);
    const r = await post(url, HANDSHAKE, { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' });
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie')).toMatch(/; Secure$/);
    expect(seen[0]).toMatchObject({ ip: '203.0.113.7', secure: true, remoteAddress: '127.0.0.1' });

    // An untrusted peer's X-Forwarded-* are ignored, as Fastify does.
    const strict = await start(() => undefined, { trustProxy: '10.0.0.1' }, seen);
    const s = await post(strict.url, HANDSHAKE, {
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-proto': 'https',
    });
    expect(s.headers.get('set-cookie')).not.toMatch(/Secure/);
    expect(seen[1]).toMatchObject({ ip: '127.0.0.1', secure: false });
  });

  it('gives request.ip and secure exactly as Fastify does, on both paths, for every trustProxy form', async () => {
    const forms: FastifyServerOptions['trustProxy'][] = [
      undefined,
      false,
      true,
      // A hop count (Fastify's runtime reads it, its types omit it): since Fastify 5.12.1, the
      // peer range's floor, it trusts no peer at all.
      ...([1, 3] as unknown as FastifyServerOptions['trustProxy'][]),
      'loopback',
      '127.0.0.1',
      '127.0.0.1, 198.51.100.0/24',
      ['127.0.0.0/8'],
      '10.0.0.1',
      (address: string) => address === '127.0.0.1',
      (_address: string, hop: number) => hop < 2,
    ];
    const requests: Record<string, string>[] = [
      {},
      { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' },
      { 'x-forwarded-for': '192.0.2.1, 198.51.100.9, 203.0.113.7', 'x-forwarded-proto': 'http, https' },
      { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https, http' },
    ];
    for (const trustProxy of forms) {
      const direct: RequestInfo[] = [];
      const routed: RequestInfo[] = [];
      const options = trustProxy === undefined ? {} : { trustProxy };
      // What Fastify itself says, from a route of the same app (a route is no hook).
      const whoami = (app: FastifyInstance) =>
        app.post('/whoami', async (req) => ({ ip: req.ip, secure: req.protocol === 'https' }));
      const a = await start(whoami, options, direct);
      const b = await start((app) => app.addHook('onRequest', async () => undefined), options, routed);
      expect(servedDirectly(a.app)).toBe(true);
      expect(servedDirectly(b.app)).toBe(false);
      for (const headers of requests) {
        expect((await post(a.url, HANDSHAKE, headers)).status).toBe(200);
        expect((await post(b.url, HANDSHAKE, headers)).status).toBe(200);
        const truth = (await (await post(a.url.replace(/\/bayeux$/, '/whoami'), '{}', headers)).json()) as {
          ip: string;
          secure: boolean;
        };
        const label = `${String(trustProxy)} ${JSON.stringify(headers)}`;
        expect({ label, ip: direct.at(-1)?.ip, secure: direct.at(-1)?.secure }).toEqual({ label, ...truth });
        expect({ label, ip: routed.at(-1)?.ip, secure: routed.at(-1)?.secure }).toEqual({ label, ...truth });
      }
    }
  });

  it('asks for the Fastify release whose trustProxy rule it copies, in the peer range and the plugin metadata', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    expect(pkg.peerDependencies.fastify).toBe(`^${TRUST_RULE_FASTIFY}`);
    const meta = (bayou as unknown as Record<symbol, { fastify?: string }>)[Symbol.for('plugin-meta')];
    expect(meta?.fastify).toBe(`^${TRUST_RULE_FASTIFY}`);
    // The Fastify the tests run on is in that range, so the parity test above checks the rule copied.
    const [major, minor, patch] = Fastify().version.split('.').map(Number) as [number, number, number];
    const [fMajor, fMinor, fPatch] = TRUST_RULE_FASTIFY.split('.').map(Number) as [number, number, number];
    expect(major).toBe(fMajor);
    expect(minor * 1000 + patch).toBeGreaterThanOrEqual(fMinor * 1000 + fPatch);
  });
});
