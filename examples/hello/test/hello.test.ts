/**
 * The hello world in Chromium: the page served by server.mjs prints a time that the server
 * published on /time, and then the next one.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { startHello } from '../server.mjs';

const published: string[] = [];
let hello: { url: string; close: () => Promise<void> };
let browser: Browser;

beforeAll(async () => {
  hello = await startHello({ port: 0, host: '127.0.0.1', onPublish: (t: string) => published.push(t) });
  browser = await chromium.launch(chromiumOptions());
});

afterAll(async () => {
  await browser?.close();
  await hello?.close();
});

describe('examples/hello', () => {
  it('shows the time the server pushes on /time, and then the next one', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(hello.url);
    const time = page.locator('#time');
    await page.waitForFunction(() =>
      /^\d{4}-\d\d-\d\dT/.test(document.getElementById('time')?.textContent ?? ''),
    );
    const first = (await time.textContent()) as string;
    expect(published).toContain(first);
    await page.waitForFunction(
      (previous) => (document.getElementById('time')?.textContent ?? previous) !== previous,
      first,
    );
    const second = (await time.textContent()) as string;
    expect(published).toContain(second);
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
    expect(await page.locator('#state').textContent()).toBe('connected');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('listens on this machine only by default (an open server), and prints that address', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
    delete env.HOST;
    const cwd = fileURLToPath(new URL('..', import.meta.url));
    const child = spawn(process.execPath, ['server.mjs'], { cwd, env });
    let out = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    });
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exited;
    expect(line).toMatch(
      /^Bayou hello world: http:\/\/127\.0\.0\.1:\d+ \(open server: anyone who reaches it may subscribe and publish; this machine only, HOST=0\.0\.0\.0 shares it\)$/,
    );
  });
});
