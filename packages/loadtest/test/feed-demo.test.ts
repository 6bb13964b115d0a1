/**
 * feed --source demo against an in-process Bayou server with its demo feed: the driver
 * publishes nothing, the server's provider produces /demo/prices/<SYMBOL> records.
 */
import { createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli-main.js';
import { ExitCodes } from '../src/errors.js';
import { runScenario } from '../src/runner.js';

const SYMBOLS = 50;
const RATE = 10;
const CLIENTS = 40;
const PER_CLIENT = 5;

let server: Awaited<ReturnType<typeof createServer>>;
let url: string;

beforeAll(async () => {
  server = await createServer({ host: '127.0.0.1', port: 0, demoFeed: { symbols: SYMBOLS, rate: RATE } });
  url = `${await server.listen()}/bayeux`;
});

afterAll(async () => {
  await server.close();
});

describe.each(['websocket', 'long-polling'] as const)('feed --source demo over %s', (transport) => {
  it('receives snapshots, then deltas near clients × subjects-per-client × rate', async () => {
    const r = await runScenario('feed', {
      url,
      transport,
      source: 'demo',
      clients: CLIENTS,
      subjects: SYMBOLS,
      subjectsPerClient: PER_CLIENT,
      rate: RATE,
      warmup: 300,
      duration: 2000,
      drain: 1000,
    });
    const nominal = CLIENTS * PER_CLIENT * RATE;
    expect(r.sessions).toMatchObject({ requested: CLIENTS, connected: CLIENTS, failed: 0, lost: 0 });
    expect(r.messages.sent).toBe(0);
    // The server produced the updates: loss is not claimed either way.
    expect(r.messages).toMatchObject({ expected: null, lost: null, duplicated: null });
    const f = r.feed!;
    expect(f).toMatchObject({
      source: 'demo',
      subscriptions: CLIENTS * PER_CLIENT,
      nominalUpdatesPerSecond: nominal,
      lossCounted: false,
      snapshots: {
        expected: CLIENTS * PER_CLIENT,
        received: CLIENTS * PER_CLIENT,
        missing: 0,
        duplicated: 0,
      },
      deltasBeforeSnapshot: 0,
      unexpected: 0,
      untimed: 0,
    });
    // A functional check, not a timed benchmark: a generous band around the nominal rate.
    expect(f.updatesPerSecond).toBeGreaterThan(nominal * 0.5);
    expect(f.updatesPerSecond).toBeLessThan(nominal * 1.5);
    expect(r.deliveredPerSecond).toBe(f.updatesPerSecond);
    expect(f.updatesPerClientPerSecond).toBeGreaterThan(PER_CLIENT * RATE * 0.5);
    expect(r.updatesPerClientPerSecond).toBe(f.updatesPerClientPerSecond);
    expect(f.deltas).toBeGreaterThan(nominal * 0.5 * 2);
    expect(r.messages.received).toBe(f.deltas! + f.snapshots!.received);
    // Latency from the updates' own time field; one clock, one machine, a loaded test run.
    expect(r.latency.count).toBeGreaterThan(nominal * 0.5 * 2 * 0.9);
    expect(r.latency.count).toBeLessThanOrEqual(f.deltas!);
    expect(r.latency.p50).toBeLessThan(1000);
    // The server produced every update the clients counted: its CPU in the window is more than a tick.
    expect(r.server?.cpuSeconds).toBeGreaterThan(0);
    expect(r.exitCode).toBe(ExitCodes.OK);
  });
});

describe('bayou-loadtest feed --source demo', () => {
  function capture() {
    let text = '';
    return {
      io: { out: { write: (t: string) => (text += t) }, err: { write: () => true } },
      text: () => text,
    };
  }

  it('prints updates/s and says that loss is not counted instead of claiming none', async () => {
    const out = capture();
    const code = await main(
      [
        'feed',
        '--source',
        'demo',
        '--url',
        url,
        '--clients',
        '20',
        '--subjects',
        String(SYMBOLS),
        '--subjects-per-client',
        '3',
        '--rate',
        String(RATE),
        '--duration',
        '1s',
        '--no-progress',
      ],
      out.io,
    );
    const text = out.text();
    expect(text).toContain('snapshots 60/60  missing 0  duplicated 0');
    expect(text).toContain('loss       not counted');
    expect(text).not.toMatch(/lost 0/);
    expect(text).toMatch(/throughput [\d,]+ updates\/s over 1\.0 s .*nominal 600 at --rate 10/);
    expect(text).toMatch(/feed {7}[\d.]+ updates\/s per client, [\d.]+ per subscription/);
    expect(text).toContain("receive time − the update's time field");
    expect(code).toBe(ExitCodes.OK);
  });

  it('fails when subscriptions get no snapshot (symbols the server does not have)', async () => {
    const r = await runScenario('feed', {
      url,
      source: 'demo',
      clients: 10,
      subjects: SYMBOLS + 50,
      subjectsPerClient: 10,
      duration: 300,
      drain: 300,
      metricsUrl: 'off',
    });
    const s = r.feed!.snapshots!;
    expect(s.expected).toBe(100);
    expect(s.missing).toBeGreaterThan(0);
    expect(s.received + s.missing).toBe(100);
    expect(r.exitCode).toBe(ExitCodes.LOSS);
  });
});
