/**
 * `--compression`: the WebSocket driver offers `permessage-deflate`, a server with
 * `compression` on accepts it, and the same run delivers everything with fewer bytes on
 * the server's sockets than without the flag.
 */
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli-main.js';
import { ExitCodes } from '../src/errors.js';

let server: BayouServer;
let url: string;
const offers: (string | undefined)[] = [];
const sockets: { bytesWritten: number }[] = [];

beforeAll(async () => {
  server = await createServer({ host: '127.0.0.1', port: 0, logger: false, compression: true });
  server.app.server.on('upgrade', (req) => offers.push(req.headers['sec-websocket-extensions']));
  server.app.server.on('connection', (socket) => sockets.push(socket));
  url = `${await server.listen()}/bayeux`;
});
afterAll(async () => {
  await server?.close();
});

const silent = { out: { write: () => true }, err: { write: () => true } };

/** Bytes the server wrote during one small chat run (1,500-character messages), with `extra` flags. */
async function run(extra: string[]): Promise<number> {
  const before = sockets.reduce((sum, s) => sum + s.bytesWritten, 0);
  const args = ['chat', '--url', url, '--clients', '6', '--rooms', '2', '--rooms-per-client', '2'];
  args.push('--batches', '5', '--batch-size', '4', '--message-size', '1500', '--pause', '1ms');
  args.push('--drain', '2s', '--metrics-url', 'off', '--no-progress', ...extra);
  expect(await main(args, silent)).toBe(ExitCodes.OK);
  return sockets.reduce((sum, s) => sum + s.bytesWritten, 0) - before;
}

describe('bayou-loadtest --compression', () => {
  it('offers permessage-deflate and gets what it publishes back in fewer bytes', async () => {
    const plain = await run([]);
    expect(offers.every((o) => o === undefined)).toBe(true);
    const compressed = await run(['--compression']);
    expect(offers.some((o) => o?.includes('permessage-deflate; client_max_window_bits'))).toBe(true);
    expect(compressed).toBeLessThan(plain * 0.7);
  });
});
