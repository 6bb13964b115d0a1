/**
 * `--header`, `--handshake-ext` and `--channel-prefix` against a real @bayou/server whose
 * `authenticate` hook wants a header and a token, and whose `canSubscribe` allows only the
 * prefixed channels: without them the run fails, with them it delivers everything, over
 * WebSocket and long-polling.
 */
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli-main.js';
import { ExitCodes } from '../src/errors.js';

let server: BayouServer;
let url: string;
const seen = { headers: 0, tokens: 0 };

beforeAll(async () => {
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    authenticate: (message, request) => {
      const ext = message.ext as { token?: unknown } | undefined;
      if (request.headers['x-tenant'] === 'acme') seen.headers++;
      if (ext?.token === 's3cret') seen.tokens++;
      return request.headers['x-tenant'] === 'acme' && ext?.token === 's3cret';
    },
    canSubscribe: (_session, channel) => channel.startsWith('/lt/'),
  });
  url = `${await server.listen()}/bayeux`;
});
afterAll(async () => {
  await server?.close();
});

function capture() {
  let text = '';
  return {
    io: { out: { write: (t: string) => (text += t) }, err: { write: (t: string) => (text += t) } },
    text: () => text,
  };
}

const small = [
  '--clients',
  '10',
  '--rooms',
  '3',
  '--rooms-per-client',
  '2',
  '--batches',
  '5',
  '--batch-size',
  '4',
];
const quick = ['--pause', '1ms', '--drain', '1s', '--metrics-url', 'off', '--no-progress'];
const auth = [
  '--header',
  'X-Tenant: acme',
  '--handshake-ext',
  '{"token":"s3cret"}',
  '--channel-prefix',
  '/lt',
];

describe('a server that needs a header, a token and its own channels', () => {
  it('refuses a run without them', async () => {
    const out = capture();
    const code = await main(['chat', '--url', url, ...small, ...quick], out.io);
    expect(code).not.toBe(ExitCodes.OK);
    expect(out.text()).toMatch(/handshake|denied|failed/i);
  });

  it.each(['websocket', 'long-polling'])('delivers everything with them over %s', async (transport) => {
    const before = { ...seen };
    const out = capture();
    const code = await main(
      ['chat', '--url', url, '--transport', transport, ...small, ...quick, ...auth],
      out.io,
    );
    expect(out.text()).toContain('lost 0');
    expect(code).toBe(ExitCodes.OK);
    expect(seen.headers - before.headers).toBeGreaterThanOrEqual(10);
    expect(seen.tokens - before.tokens).toBeGreaterThanOrEqual(10);
  });
});
