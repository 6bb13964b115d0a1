import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error faye ships no type declarations
import faye from 'faye';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../src/runner.js';

let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer();
  new faye.NodeAdapter({ mount: '/bayeux', timeout: 25 }).attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bayeux`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe.each(['websocket', 'long-polling'] as const)('against a Faye server over %s', (transport) => {
  it('completes the chat scenario with zero loss', async () => {
    const r = await runScenario('chat', {
      url,
      transport,
      clients: 100,
      rooms: 10,
      roomsPerClient: 3,
      batches: 30,
      batchSize: 10,
      pause: 5,
      metricsUrl: 'off',
    });
    expect(r.sessions.connected).toBe(100);
    expect(r.messages.sent).toBe(300);
    // Every room member gets every message: 300 messages × ~30 members each.
    expect(r.messages.expected).toBeGreaterThan(300 * 20);
    expect(r.messages.received).toBe(r.messages.expected);
    expect(r.messages.lost).toBe(0);
    expect(r.messages.duplicated).toBe(0);
    expect(r.latency.count).toBe(r.messages.received);
    expect(r.exitCode).toBe(0);
  });

  it('runs the feed scenario: every watcher gets every update', async () => {
    const r = await runScenario('feed', {
      url,
      transport,
      clients: 50,
      subjects: 10,
      subjectsPerClient: 2,
      rate: 20,
      duration: 1000,
      metricsUrl: 'off',
    });
    expect(r.messages.sent).toBeGreaterThan(100);
    expect(r.messages.lost).toBe(0);
    expect(r.updatesPerClientPerSecond).toBeGreaterThan(0);
    expect(r.exitCode).toBe(0);
  });
});

describe('with two worker processes against Faye', () => {
  it('splits the clients and still accounts for every delivery', async () => {
    const r = await runScenario('chat', {
      url,
      clients: 100,
      rooms: 10,
      roomsPerClient: 3,
      batches: 20,
      batchSize: 5,
      pause: 5,
      workers: 2,
      metricsUrl: 'off',
    });
    expect(r.generator.workers).toBe(2);
    expect(r.sessions.connected).toBe(100);
    expect(r.messages.sent).toBe(100);
    expect(r.messages.received).toBe(r.messages.expected);
    expect(r.exitCode).toBe(0);
  });
});
