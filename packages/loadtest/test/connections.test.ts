import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import { BayeuxWsDriver } from '../src/bayeux-ws-driver.js';
import { renderReport } from '../src/report.js';
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

  it('binds client i to port base + i / addresses with --local-port-base, and falls back when a port is held', async () => {
    // Below the ephemeral range (32768–60999), so no other socket takes these ports by chance.
    // Client 5 would take 127.0.0.3:21002: something else holds it, so the kernel picks its port.
    const holder = net.createServer().listen(21002, '127.0.0.3');
    await new Promise((resolve) => holder.once('listening', resolve));
    const fresh = await startTinyServer();
    try {
      const r = await runScenario('connections', {
        url: fresh.url,
        clients: 300,
        ramp: 0,
        hold: 10,
        localAddresses: ['127.0.0.2', '127.0.0.3'],
        localPortBase: 21000,
        metricsUrl: 'off',
      });
      expect(r.sessions).toMatchObject({ connected: 300, failed: 0, lost: 0 });
      for (let i = 0; i < 300; i++) {
        if (i === 5) continue;
        expect(fresh.remoteEnds.has(`127.0.0.${2 + (i % 2)}:${21000 + Math.floor(i / 2)}`)).toBe(true);
      }
      expect(fresh.remoteEnds.size).toBe(300);
      expect(fresh.remoteEnds.has('127.0.0.3:21002')).toBe(false);
    } finally {
      holder.close();
      await fresh.close();
    }
  });

  it('counts the sessions lost while held, by the reason they ended', async () => {
    const kicking = await startTinyServer({ kick: 3 });
    try {
      const r = await runScenario('connections', {
        url: kicking.url,
        clients: 20,
        ramp: 0,
        // The kicks come 20 ms after the first subscribes, well inside the hold.
        hold: 1000,
        workers: 2,
        metricsUrl: 'off',
      });
      expect(r.sessions).toMatchObject({
        connected: 20,
        lost: 3,
        lostReasons: { 'socket closed 4001 kicked': 3 },
      });
      expect(renderReport(r)).toContain('lost during run 3 (socket closed 4001 kicked ×3)');
      // When: inside the run, after the sessions were opened.
      expect(r.sessions.lostAtSeconds).toHaveLength(3);
      for (const t of r.sessions.lostAtSeconds ?? []) expect(t).toBeGreaterThan(0);
      expect(renderReport(r)).toMatch(/lost at {4}.*\(3 timed; seconds since the start\)/);
    } finally {
      await kicking.close();
    }
  });

  it('counts its open sockets as they open and close', async () => {
    const kicking = await startTinyServer({ kick: 1 });
    const driver = new BayeuxWsDriver({ url: kicking.url, localAddresses: [], sink: () => undefined });
    try {
      for (const i of [0, 1, 2]) await driver.open(i);
      expect(driver.connected()).toBe(3);
      await Promise.all([0, 1, 2].map((i) => driver.subscribe(i, ['/a'])));
      // The first subscriber is kicked 20 ms later.
      await eventually(() => expect(driver.connected()).toBe(2));
      await driver.close();
      expect(driver.connected()).toBe(0);
    } finally {
      await kicking.close();
    }
  });

  it('spreads the sessions over --channels and times one broadcast to every channel', async () => {
    const r = await runScenario('connections', {
      url: server.url,
      clients: 300,
      channels: 7,
      ramp: 0,
      hold: 50,
      broadcast: true,
      metricsUrl: 'off',
    });
    expect(r.sessions).toMatchObject({ connected: 300, failed: 0, lost: 0 });
    // Session i on channel i mod 7, each channel's one message reaching its members only.
    expect(r.broadcast).toMatchObject({ channels: 7, expected: 300, reached: 300 });
    expect(r.messages).toMatchObject({ sent: 7, received: 300, lost: 0, duplicated: 0 });
    expect(r.broadcast!.ms).toBeGreaterThan(0);
    expect(r.idle?.sessions).toBe(300);
    expect(r.idle?.generatorProcesses).toBe(1);
    expect(r.exitCode).toBe(0);
  });

  it('fails the run when the broadcast misses a channel', async () => {
    const dropping = await startTinyServer({ dropIds: [3] });
    try {
      const r = await runScenario('connections', {
        url: dropping.url,
        clients: 70,
        channels: 7,
        ramp: 0,
        hold: 10,
        broadcast: true,
        drain: 300,
        metricsUrl: 'off',
      });
      expect(r.broadcast).toMatchObject({ expected: 70, reached: 60 });
      expect(r.messages.lost).toBe(10);
      expect(r.exitCode).toBe(1);
    } finally {
      await dropping.close();
    }
  });

  it('stops the ramp at --max-ramp, holds what it opened and fails the run', async () => {
    const r = await runScenario('connections', {
      url: server.url,
      clients: 1000,
      ramp: 100,
      maxRamp: 300,
      hold: 10,
      metricsUrl: 'off',
    });
    expect(r.sessions.rampStopped).toBe('ramp stopped: --max-ramp 0.3 s reached');
    expect(r.sessions.connected).toBeGreaterThan(0);
    expect(r.sessions.connected).toBeLessThan(1000);
    expect(r.sessions.failed).toBe(0);
    expect(r.exitCode).toBe(1);
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
