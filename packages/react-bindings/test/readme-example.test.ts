// @vitest-environment node
/**
 * The README's example runs as written: its tsx block is bundled with esbuild (the only
 * change: the server URL, `http://localhost:8080/bayeux` in the README, becomes this
 * test's server) and opened in headless Chromium on a page with `<div id="root">`, served
 * by a Bayou server with its demo feed, as the README says. The quotes must show prices.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BayouServer, createServer } from '@bayou/server';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const pkg = join(import.meta.dirname, '..');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const work = join(pkg, '.tmp', `readme-${process.pid}`);
let server: BayouServer;
let browser: Browser;
let base: string;

/** The first ```tsx block after the "### Example" heading of the README. */
function readmeExample(): string {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Example'));
  const m = /```tsx\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README: no tsx block under ### Example');
  return m[1] as string;
}

beforeAll(async () => {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  server = await createServer({ host: '127.0.0.1', port: 0, demoFeed: { symbols: 10, rate: 5 } });
  const example = readmeExample();
  expect(example).toContain("'http://localhost:8080/bayeux'");
  expect(example).toContain("import { createRoot } from 'react-dom/client';");
  mkdirSync(work, { recursive: true });
  // The page and the bundle come from the same server: relative URLs, no CORS.
  writeFileSync(join(work, 'example.tsx'), example.replace("'http://localhost:8080/bayeux'", "'/bayeux'"));
  const out = await build({
    entryPoints: [join(work, 'example.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: { '@bayou/react': join(pkg, 'src/index.ts') },
    nodePaths: [join(pkg, 'node_modules')],
    logLevel: 'error',
  });
  const bundle = out.outputFiles[0]?.text as string;
  server.app.get('/', (_req, reply) =>
    reply
      .type('text/html')
      .send(
        '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/app.js"></script>',
      ),
  );
  server.app.get('/app.js', (_req, reply) => reply.type('text/javascript').send(bundle));
  base = await server.listen();
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the README example', () => {
  it('shows live bid, ask and last prices of AAA and AAB from the demo feed', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base);
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('tbody td')].map((td) => td.textContent ?? '');
      return cells.length === 8 && cells.filter((t) => /^\d+\.\d{3}$/.test(t)).length === 6;
    });
    const rows = await page.$$eval('tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(rows.map((r) => r[0])).toEqual(['AAA', 'AAB']);
    expect(await page.textContent('#root > span')).toBe('connected');
    expect(errors).toEqual([]);
    await page.close();
  });
});
