// What sharedConnection saves the server: 12 Chromium tabs of one page subscribed to one
// channel, shared and not, with WebSocket and with WebSocket refused (the HTTP/1.1
// fallback), a numbered stream of RATE msg/s for SECONDS s. Reports the server's sessions,
// open TCP connections, deliveries it made, messages the tabs received, and its CPU time
// per message a tab received. The server runs in a child process (cost-server.mjs).
//   node packages/browser-client/bench/shared-connection.mjs [--rate 200] [--seconds 10]
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumOptions } from '../../../scripts/chromium.mjs';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    tabs: { type: 'string', default: '12' },
  },
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const TABS = Number(values.tabs);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function ask(child, message, key) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (key in m) {
        child.off('message', on);
        resolve(m);
      }
    };
    child.on('message', on);
    if (message) child.send(message);
  });
}

// A certificate for the HTTP/2 rows, made for this run.
const dir = mkdtempSync(join(tmpdir(), 'bayou-bench-'));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ],
  { stdio: 'ignore' },
);

const TRANSPORTS = {
  ws: 'WebSocket',
  nows: 'WebSocket refused (HTTP/1.1)',
  h2: 'WebSocket refused (HTTP/2, TLS)',
};

async function scenario(mode, shared) {
  const child = fork(new URL('./cost-server.mjs', import.meta.url), [mode, keyFile, certFile]);
  const { base } = await ask(child, null, 'base');
  const options = chromiumOptions();
  const browser = await chromium.launch({
    ...options,
    args: [...options.args, '--ignore-certificate-errors'],
  });
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const pages = [];
    // Every page loads first: past the HTTP/1.1 wall a page would not even load.
    for (let i = 0; i < TABS; i++) {
      const page = await context.newPage();
      await page.goto(`${base}/`);
      pages.push(page);
    }
    for (const page of pages) await page.evaluate((o) => window.start(o), { sharedConnection: shared });
    // Settled: subscribed (one per session), or 8 s for the tabs that can.
    const until = Date.now() + 8000;
    for (;;) {
      const { subscribers, sessions } = await ask(child, { cmd: 'subscribers' }, 'subscribers');
      if ((shared ? subscribers === 1 && sessions === 1 : subscribers === TABS) || Date.now() > until) break;
      await sleep(200);
    }
    const start = await Promise.all(pages.map((p) => p.evaluate(() => window.got)));
    const report = await ask(child, { cmd: 'run', rate: RATE, seconds: SECONDS }, 'published');
    await sleep(1000);
    const end = await Promise.all(pages.map((p) => p.evaluate(() => window.got)));
    const got = end.map((e, i) => e - (start[i] ?? 0));
    const received = got.reduce((a, b) => a + b, 0);
    return {
      transport: TRANSPORTS[mode],
      shared,
      sessions: report.sessions,
      connections: report.connections,
      published: report.published,
      serverDeliveries: report.delivered,
      tabsReceiving: got.filter((g) => g > 0).length,
      tabReceived: received,
      cpuMs: Math.round(report.cpuUs / 1000),
      cpuUsPerTabMessage: received > 0 ? +(report.cpuUs / received).toFixed(1) : null,
    };
  } finally {
    await browser.close();
    child.send({ cmd: 'stop' });
  }
}

const rows = [];
for (const mode of ['ws', 'nows', 'h2']) {
  for (const shared of [false, true]) rows.push(await scenario(mode, shared));
}
rmSync(dir, { recursive: true, force: true });
console.log(`${TABS} tabs, /feed at ${RATE} msg/s for ${SECONDS} s`);
console.table(rows);
