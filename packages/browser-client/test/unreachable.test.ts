/**
 * A client that cannot connect says why, in Node: an `error` per distinct reason (not one
 * per retry) with the HTTP status when there is one, and `connect()` rejecting at its
 * `connectDeadline` with that reason while the client goes on trying.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, type BayouError, type WebSocketConstructor } from '../src/index.js';

const options = {
  WebSocket: WebSocket as unknown as WebSocketConstructor,
  connectDeadline: 1500,
  minReconnectDelay: 50,
  maxReconnectDelay: 100,
};
let client: BayouClient | undefined;
let server: Server | undefined;

afterEach(async () => {
  await client?.disconnect();
  await new Promise((r) => (server ? server.close(r) : r(null)));
  client = undefined;
  server = undefined;
});

async function attempt(url: string): Promise<{ errors: BayouError[]; rejected: BayouError }> {
  client = new BayouClient(url, options);
  const errors: BayouError[] = [];
  client.on('error', (e) => errors.push(e));
  const rejected = await client.connect().then(
    () => {
      throw new Error('connected');
    },
    (e: BayouError) => e,
  );
  return { errors, rejected };
}

describe('a client that cannot connect', () => {
  it('reports a server that is not there once, and rejects connect() at the deadline, still trying', async () => {
    const { errors, rejected } = await attempt('http://127.0.0.1:1/bayeux');
    expect(errors).toHaveLength(1); // a dozen retries in 1.5 s, one reason
    expect(errors[0]).toMatchObject({ code: 'BAYOU_ERR_UNREACHABLE', status: null });
    expect(errors[0]?.message).toMatch(/^http:\/\/127\.0\.0\.1:1\/bayeux: long-polling: /);
    expect(rejected.code).toBe('BAYOU_ERR_CONNECT_TIMEOUT');
    expect(rejected.message).toMatch(/^not connected in 1500 ms \(http:\/\/127\.0\.0\.1:1\/bayeux: /);
    expect(client?.state).toBe('connecting');
  });

  it('gives the HTTP status of an endpoint that is not Bayeux (404 at a wrong path)', async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such path"}');
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const { errors, rejected } = await attempt(`http://127.0.0.1:${port}/bayou`);
    expect(errors[0]).toMatchObject({ code: 'BAYOU_ERR_UNREACHABLE', status: 404 });
    expect(errors[0]?.message).toContain('HTTP 404 "no such path"');
    expect(rejected).toMatchObject({ code: 'BAYOU_ERR_CONNECT_TIMEOUT', status: 404 });
  });
});
