/**
 * The @bayou/client drivers of the bench: real SDK instances, split over two worker
 * processes, run the chat scenario against a real Bayou server with every message counted —
 * as the SDK ships (ack in numbered frames, recovery), with ack in connect replies, and with
 * ack and recovery off.
 */
import { createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../src/runner.js';

let server: Awaited<ReturnType<typeof createServer>>;
let url: string;

beforeAll(async () => {
  server = await createServer({ host: '127.0.0.1', port: 0, logger: false });
  url = `${await server.listen()}/bayeux`;
});

afterAll(async () => {
  await server.close();
});

describe.each([
  ['sdk', 'websocket'],
  ['sdk-connect-ack', 'websocket'],
  ['sdk-plain', 'websocket'],
  ['sdk', 'long-polling'],
] as const)('the %s driver over %s', (protocol, transport) => {
  it('delivers every chat message exactly once across two worker processes', async () => {
    const r = await runScenario(
      'chat',
      {
        url,
        transport,
        clients: 40,
        rooms: 8,
        roomsPerClient: 2,
        rate: 50,
        duration: 1000,
        drain: 3000,
        workers: 2,
        metricsUrl: 'off',
        progress: false,
      },
      { protocol },
    );
    expect(r.sessions).toMatchObject({ requested: 40, connected: 40, failed: 0, lost: 0 });
    expect(r.messages.sent).toBeGreaterThan(20);
    expect(r.messages).toMatchObject({ lost: 0, duplicated: 0 });
    expect(r.messages.received).toBe(r.messages.expected);
    if (transport === 'websocket') expect(r.deliveriesPerFrame).toBeGreaterThan(0);
    expect(r.exitCode).toBe(0);
  }, 30_000);
});
