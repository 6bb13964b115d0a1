import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../src/runner.js';
import { startTinyServer, type TinyServer } from './tiny-bayeux-server.js';

let server: TinyServer;

beforeAll(async () => {
  server = await startTinyServer();
});

afterAll(async () => {
  await server.close();
});

describe('connections scenario', () => {
  it('drives 2,000 WebSocket sessions from one process over eight local addresses', async () => {
    const r = await runScenario('connections', {
      url: server.url,
      clients: 2000,
      ramp: 5000,
      hold: 300,
      localAddresses: [
        '127.0.0.2',
        '127.0.0.3',
        '127.0.0.4',
        '127.0.0.5',
        '127.0.0.6',
        '127.0.0.7',
        '127.0.0.8',
        '127.0.0.9',
      ],
      metricsUrl: 'off',
    });
    expect(r.sessions).toMatchObject({ requested: 2000, connected: 2000, failed: 0, lost: 0 });
    expect(r.sessions.connectsPerSecond).toBeGreaterThan(0);
    expect(r.generator.rssBytes).toBeGreaterThan(0);
    expect([...server.remoteAddresses].sort()).toEqual([
      '127.0.0.2',
      '127.0.0.3',
      '127.0.0.4',
      '127.0.0.5',
      '127.0.0.6',
      '127.0.0.7',
      '127.0.0.8',
      '127.0.0.9',
    ]);
    expect(r.exitCode).toBe(0);
  });

  it('counts the sessions a server refuses as failures and fails the run', async () => {
    const r = await runScenario('connections', {
      url: server.url.replace('/bayeux', '/nowhere'),
      clients: 5,
      ramp: 1000,
      hold: 10,
      metricsUrl: 'off',
    });
    expect(r.sessions.failed).toBe(5);
    expect(r.sessions.firstError).toBeDefined();
    expect(r.exitCode).toBe(1);
  });
});
