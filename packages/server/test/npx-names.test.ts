/**
 * The commands the docs and the CLI give run the project's own packages outside a clone
 * too: `npx @bayou/server …` and `npx @bayou/loadtest …`, never `npx bayou` or
 * `npx bayou-loadtest`, which outside the clone ask the npm registry for unscoped packages
 * this project does not own (issue #31, item 8).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliPath } from './bayou-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
/** `npx bayou`, `npx -y bayou-loadtest`, `npx --no-install bayou`: an unscoped name after npx. */
const UNSCOPED = /\bnpx(?:\s+(?:-y|--yes|--no-install|--no))*\s+bayou(?:-loadtest)?\b/;
/** A line warning against the unscoped names (it says why: the registry). */
const WARNING = /registry/;

describe('npx names', () => {
  it('no README, doc or source file tells to run an unscoped bayou package through npx', () => {
    const files = execFileSync('git', ['ls-files', '*.md', '*.ts', '*.mjs', '*.js', '*.json', '*.html'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f !== '' && !f.endsWith('npx-names.test.ts') && !f.endsWith('CHANGELOG.md'));
    const found = files.flatMap((f) =>
      readFileSync(join(root, f), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          UNSCOPED.test(line) && !WARNING.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(found).toEqual([]);
    expect(UNSCOPED.test('npx bayou start')).toBe(true);
    expect(UNSCOPED.test('npx -y bayou-loadtest chat')).toBe(true);
    expect(UNSCOPED.test('npx @bayou/server start')).toBe(false);
  });

  it('the CLI help and its usage errors name npx @bayou/server', () => {
    const help = spawnSync('node', [cliPath, '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/^Usage: npx @bayou\/server start \[options\]$/m);
    const wrong = spawnSync('node', [cliPath, 'strat'], { encoding: 'utf8' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toBe(
      'bayou: unknown command "strat"; the command is "start" (npx @bayou/server --help lists every option)\n',
    );
  });
});
