import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli-main.js';
import { ExitCodes } from '../src/errors.js';
import { startTinyServer, type TinyServer } from './tiny-bayeux-server.js';

function capture() {
  let text = '';
  let errors = '';
  return {
    io: { out: { write: (t: string) => (text += t) }, err: { write: (t: string) => (errors += t) } },
    text: () => text,
    err: () => errors,
  };
}

const small = [
  '--clients',
  '20',
  '--rooms',
  '4',
  '--rooms-per-client',
  '2',
  '--batches',
  '10',
  '--batch-size',
  '5',
];
const quick = ['--pause', '1ms', '--drain', '1s', '--metrics-url', 'off', '--no-progress'];

describe('bayou-loadtest exit code', () => {
  let server: TinyServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('exits 0 when every message reaches every room member', async () => {
    server = await startTinyServer();
    const out = capture();
    const code = await main(['chat', '--url', server.url, ...small, ...quick], out.io);
    expect(out.text()).toContain('lost 0');
    expect(code).toBe(ExitCodes.OK);
  });

  it('exits non-zero and reports the loss when the server drops one message', async () => {
    server = await startTinyServer({ dropIds: [7] });
    const out = capture();
    const code = await main(['chat', '--url', server.url, ...small, ...quick], out.io);
    expect(code).toBe(ExitCodes.LOSS);
    expect(out.text()).toMatch(/lost [1-9]/);
    expect(out.text()).toContain('FAILED');
  });

  it('exits with the latency code when a delivery takes longer than --max-latency', async () => {
    server = await startTinyServer({ delayIds: [3], delayMs: 300 });
    const out = capture();
    const code = await main(
      ['chat', '--url', server.url, ...small, ...quick, '--max-latency', '100ms'],
      out.io,
    );
    expect(code).toBe(ExitCodes.LATENCY);
    expect(out.text()).toContain('ABORTED');
  });

  it('writes the --json result and the self-contained --html report', async () => {
    server = await startTinyServer();
    const dir = mkdtempSync(join(tmpdir(), 'bayou-loadtest-'));
    const args = ['--json', join(dir, 'r.json'), '--html', join(dir, 'r.html')];
    const code = await main(['chat', '--url', server.url, ...small, ...quick, ...args], capture().io);
    expect(code).toBe(ExitCodes.OK);
    const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    expect(json.messages).toMatchObject({ sent: 50, lost: 0 });
    expect(json.messages.received).toBe(json.messages.expected);
    // The tiny server writes one frame per delivered message.
    expect(json.deliveriesPerFrame).toBe(1);
    const html = readFileSync(join(dir, 'r.html'), 'utf8');
    // uPlot is inlined: the charts need no other file and no network.
    expect(html).toContain('id="chart-throughput"');
    expect(html).toContain('var uPlot=');
    expect(html).not.toMatch(/<script[^>]* src=|<link/);
  });

  it('exits 2 on an unknown option and prints the help', async () => {
    const out = capture();
    const code = await main(['chat', '--no-such-thing', '3'], out.io);
    expect(code).toBe(ExitCodes.USAGE);
  });

  it('exits 2 with the fix when options clash, before connecting to anything', async () => {
    const out = capture();
    const code = await main(['chat', '--url', 'http://127.0.0.1:9/bayeux', '--client', 'browser'], out.io);
    expect(code).toBe(ExitCodes.USAGE);
    expect(out.err()).toMatch(/--client browser speaks streaming and eventsource: add --transport streaming/);
  });
});
