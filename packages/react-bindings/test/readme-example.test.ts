// @vitest-environment node
/**
 * The README's example runs as written: its tsx block is bundled with esbuild (the only
 * change: the server URL, `http://localhost:8080/bayeux` in the README, becomes this
 * test's server) and opened in headless Chromium on a page with `<div id="root">`. As in
 * the README, the page comes from another origin than the Bayou server, which runs its
 * demo feed and allows that origin (`--allowed-origins`). The quotes must show prices.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type BayouServer, createServer } from '@bayou/server';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOptions } from '../../../scripts/chromium.mjs';

const pkg = join(import.meta.dirname, '..');
const work = join(pkg, '.tmp', `readme-${process.pid}`);
const HTML =
  '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/app.js"></script>';
let server: BayouServer;
let pageServer: Server;
let pageUrl: string;
let browser: Browser;

/** The server command, the esbuild command and the first ```tsx block after the "### Example" heading of the README. */
function readmeExample(): { command: string; bundler: string; code: string } {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Example'));
  const command = /^npx @bayou\/server start .*$/m.exec(section)?.[0];
  const bundler = /^npx esbuild .*$/m.exec(section)?.[0];
  const m = /```tsx\n([\s\S]*?)```/.exec(section);
  if (!m || !command || !bundler)
    throw new Error(
      'README: no `npx @bayou/server start` or `npx esbuild` command or tsx block under ### Example',
    );
  return { command, bundler, code: m[1] as string };
}

beforeAll(async () => {
  const { command, bundler, code } = readmeExample();
  expect(command).toContain('--demo-feed');
  expect(command).toContain('--allowed-origins');
  expect(code).toContain("'http://localhost:8080/bayeux'");
  expect(code).toContain("import { createRoot } from 'react-dom/client';");
  // The page's own server: its origin is the one the Bayou server allows.
  let bundle = '';
  pageServer = createHttpServer((req, res) => {
    if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(HTML);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    demoFeed: { symbols: 10, rate: 5 },
    allowedOrigins: [pageUrl],
  });
  const base = await server.listen();
  mkdirSync(work, { recursive: true });
  writeFileSync(
    join(work, 'example.tsx'),
    code.replace("'http://localhost:8080/bayeux'", `'${base}/bayeux'`),
  );
  const out = await build({
    entryPoints: [join(work, 'example.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    // The README's esbuild line decides: without --jsx=automatic the page fails (React is not
    // defined). No tsconfig of this package may decide instead: a newcomer's folder has none.
    jsx: /--jsx=automatic\b/.test(bundler) ? 'automatic' : 'transform',
    tsconfigRaw: '{}',
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: { '@bayou/react': join(pkg, 'src/index.ts') },
    nodePaths: [join(pkg, 'node_modules')],
    logLevel: 'error',
  });
  bundle = out.outputFiles[0]?.text as string;
  browser = await chromium.launch(chromiumOptions());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

describe('the README example', () => {
  it('shows live bid, ask and last prices of AAA and AAB from the demo feed', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => {
      const cells = [...document.querySelectorAll('tbody td')].map((td) => td.textContent ?? '');
      return cells.length === 8 && cells.filter((t) => /^\d+\.\d{3}$/.test(t)).length === 6;
    });
    const rows = await tab.$$eval('tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(rows.map((r) => r[0])).toEqual(['AAA', 'AAB']);
    expect(await tab.textContent('#root > span')).toBe('connected');
    expect(errors).toEqual([]);
    await tab.close();
  });
});
