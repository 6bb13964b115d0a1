/**
 * The SDK section of the bench: its table (ratios to the plain clients and the verdict
 * against the thresholds) and the delay proxy that gives its latency row a long link.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDelayProxy } from '../bench/delay-proxy.mjs';
import { renderSdkTable } from '../bench/sdk-table.mjs';
import type { RoundsSummary } from '../src/stats.js';

const m = (median: number) => ({ median, spread: 0, values: [median] });
const figures = (cpu: number, p50: number, p99: number, rttP50: number, rttP99: number) => ({
  msgPerSec: m(100000 / cpu),
  cpuUsPerMsg: m(cpu),
  genCpuUsPerMsg: m(3),
  perFrame: m(10),
  satP99: m(200),
  rateMsgPerSec: m(20000),
  rateCpuUsPerMsg: m(cpu * 10),
  ratePerFrame: m(1.2),
  p50: m(p50),
  p99: m(p99),
  rttP50: m(rttP50),
  rttP99: m(rttP99),
  lost: m(0),
  reconnects: m(0),
});
const flags = {
  rounds: 3,
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  messageSize: 50,
  workers: 3,
  outstanding: 5000,
  warmup: 2000,
  measure: 5000,
  rate: 20000,
  latencyDuration: 5000,
  rtt: 100,
};
const render = (summary: RoundsSummary) =>
  renderSdkTable({
    summary,
    transports: ['websocket'],
    variants: {
      sdk: 'ack in numbered frames + recovery',
      'sdk-connect-ack': 'ack in connect replies + recovery',
      'sdk-plain': 'ack + recovery off',
    },
    flags,
    fanOut: 100,
    seconds: 60,
    command: 'pnpm bench --only sdk',
    machine: 'test machine',
  }) as string;

describe('bench SDK table', () => {
  it('gives each acknowledged variant its ratio to the plain clients and the latency ack adds on the long link', () => {
    const text = render({
      'sdk/websocket': figures(1.2, 5, 30, 111, 252),
      'sdk-connect-ack/websocket': figures(3, 10, 40, 160, 330),
      'sdk-plain/websocket': figures(1.5, 5, 30, 110, 250),
    });
    expect(text).toContain(
      '| @bayou/client, ack in connect replies + recovery | websocket | 33,333 ±0% | 3.00 ±0% | 2.00× |',
    );
    expect(text).toContain('| +50.0 / +80.0 |');
    expect(text).toContain(
      'ack in connect replies + recovery, over WebSocket at 20000 delivered msg/s: 2.00× the server CPU per delivered message',
    );
    expect(text).toContain('(threshold 1.5×: above)');
    expect(text).toContain(
      'ack adds 50.0 ms at p50 and 80.0 ms at p99 (threshold one round trip, 100 ms: within)',
    );
    expect(text).toContain(
      'ack in numbered frames + recovery, over WebSocket at 20000 delivered msg/s: 0.80×',
    );
    expect(text).toContain('ack adds 1.0 ms at p50 and 2.0 ms at p99');
  });

  it('says within when ack stays under both thresholds, and above when it adds more than a round trip', () => {
    const text = render({
      'sdk/websocket': figures(1.6, 5, 30, 120, 400),
      'sdk-plain/websocket': figures(1.5, 5, 30, 110, 250),
    });
    expect(text).toContain('(threshold 1.5×: within)');
    expect(text).toContain('150.0 ms at p99 (threshold one round trip, 100 ms: above)');
  });
});

describe('bench delay proxy', () => {
  let echo: Server | undefined;
  afterEach(() => echo?.close());

  it('delays each direction by its one-way time and keeps the bytes in order', async () => {
    echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo!.listen(0, '127.0.0.1', () => r()));
    const port = (echo.address() as { port: number }).port;
    const proxy = await startDelayProxy(`http://127.0.0.1:${port}/x`, 40);
    try {
      const url = new URL(proxy.url);
      expect(url.port).not.toBe(String(port));
      const { connect } = await import('node:net');
      const socket = connect({ host: '127.0.0.1', port: Number(url.port) });
      let got = '';
      const started = performance.now();
      const done = new Promise<number>((resolve) =>
        socket.on('data', (d) => {
          got += d.toString();
          if (got.length === 6) resolve(performance.now() - started);
        }),
      );
      socket.write('abc');
      socket.write('def');
      const elapsed = await done;
      socket.destroy();
      expect(got).toBe('abcdef');
      // There and back: at least two one-way delays.
      expect(elapsed).toBeGreaterThanOrEqual(79);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a target off loopback', async () => {
    await expect(startDelayProxy('http://10.0.0.1:80/', 10)).rejects.toThrow(/loopback only/);
  });
});
