/**
 * `npm start` for the demo comes down to `node dist/server.js`: run it as a child process
 * (PORT=0, HOST=127.0.0.1), read the URL it prints, load the page in Chromium and chat.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, packageDir } from './helpers.js';

let child: ChildProcess | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  if (child?.exitCode === null) child.kill('SIGKILL');
});

/** Everything the server printed before its URL, for the log line's wording. */
let printed = '';

function printedUrl(proc: ChildProcess, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL printed within ${ms} ms; output: ${out}`)), ms);
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /http:\/\/\S+/.exec(out);
      if (match && out.includes('\n')) {
        clearTimeout(timer);
        printed = out;
        resolve(match[0]);
      }
    });
    proc.once('exit', (code) =>
      reject(new Error(`exited with ${code} before printing a URL; output: ${out}`)),
    );
  });
}

describe('the start script', () => {
  it('is node dist/server.js, which serves the page that a browser loads and chats on', async () => {
    const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe('node dist/server.js');

    child = spawn(process.execPath, ['dist/server.js'], {
      cwd: packageDir,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', BAYOU_JWT_SECRET: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await printedUrl(child, 10_000);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Without BAYOU_JWT_SECRET it says it is an open demo, on localhost only.
    expect(printed).toMatch(/open demo: no tokens.*listening on localhost only/);

    const index = await fetch(url);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");

    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(url);
    expect(await page.title()).toBe('Bayou chat');
    await page.fill('#name', 'visitor');
    await page.click('#join');
    await page.waitForSelector('#state[data-state="connected"]', { timeout: 10_000 });
    expect(await page.textContent('#transport')).toBe('websocket');
    await page.waitForSelector('#members li[data-name="visitor"]', { timeout: 10_000 });
    await page.fill('#text', 'first!');
    await page.press('#text', 'Enter');
    await page.waitForSelector('#messages li.message', { timeout: 10_000 });
    expect(await page.textContent('#messages li.message .text')).toBe('first!');

    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
