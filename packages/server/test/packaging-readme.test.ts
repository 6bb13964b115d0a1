/**
 * The READMEs' commands run as written from a clone. The shell blocks of every README's
 * "Usage" section are extracted; each `--help` command is run from the repository root
 * (it must exit 0 and print a usage), and every other command must name something that
 * exists here: an npm script, a linked bin, a workspace package, a file. Links must stay
 * inside the repository and point at files that exist.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const readmes = [
  'README.md',
  ...['packages', 'examples'].flatMap((d) =>
    readdirSync(join(root, d))
      .map((p) => `${d}/${p}/README.md`)
      .filter((p) => existsSync(join(root, p))),
  ),
];
const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const workspaceNames = new Set(
  ['packages', 'examples'].flatMap((d) =>
    readdirSync(join(root, d))
      .filter((p) => existsSync(join(root, d, p, 'package.json')))
      .map((p) => JSON.parse(readFileSync(join(root, d, p, 'package.json'), 'utf8')).name as string),
  ),
);

/** The text of every "Usage" section (with its subsections) of a Markdown file. */
export function usageSections(markdown: string): string[] {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fence = !fence;
    const m = fence ? null : /^(#+)\s+Usage\b/.exec(lines[i]!);
    if (!m) continue;
    const level = m[1]!.length;
    const body: string[] = [];
    let inner = false;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.startsWith('```')) inner = !inner;
      const h = inner ? null : /^(#+)\s/.exec(line);
      if (h && h[1]!.length <= level) break;
      body.push(line);
    }
    out.push(body.join('\n'));
  }
  return out;
}

/** The commands of the ```sh blocks of `text`: continuations joined, comments and `&` dropped. */
export function shellCommands(text: string): string[] {
  const commands: string[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    const joined = block[1]!.replace(/\\\n\s*/g, ' ');
    for (const raw of joined.split('\n')) {
      const line = raw
        .replace(/\s+#\s.*$/, '')
        .replace(/\s*&\s*$/, '')
        .trim();
      if (line === '' || line.startsWith('#') || line.startsWith('$')) continue;
      commands.push(line);
    }
  }
  return commands;
}

/** Splits a command into words, keeping quoted strings whole (quotes removed). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** Why `command` could not run from the repository root as written, or null. */
function problem(command: string): string | null {
  const w = words(command);
  while (w[0] !== undefined && /^[A-Z_]+=/.test(w[0])) w.shift(); // PORT=3000 …
  const [tool, first, second] = w;
  if (tool === 'npm') {
    if (first === 'install') return null; // installs published packages
    if (first === '--prefix') {
      const pkgFile = join(root, second ?? '', 'package.json');
      if (!existsSync(pkgFile)) return `no package.json in ${second}`;
      const script = w[3] === 'run' ? w[4] : w[3];
      return JSON.parse(readFileSync(pkgFile, 'utf8')).scripts?.[script ?? ''] ? null : `no script ${script}`;
    }
    const script = first === 'run' ? second : first;
    return rootPkg.scripts?.[script ?? ''] ? null : `no root script ${script}`;
  }
  if (tool === 'npx') {
    const name = first === '-y' ? second : first;
    if (name === undefined) return 'npx of nothing';
    if (name.startsWith('@bayou/')) return workspaceNames.has(name) ? null : `no package ${name}`;
    return existsSync(join(root, 'node_modules/.bin', name)) ? null : `no bin ${name} at the root`;
  }
  if (tool === 'node') return first && existsSync(join(root, first)) ? null : `no file ${first}`;
  return `unknown command ${tool}`;
}

const cases = readmes.flatMap((file) =>
  usageSections(readFileSync(join(root, file), 'utf8'))
    .flatMap(shellCommands)
    .map((command) => [file, command] as const),
);

describe("the commands of the READMEs' Usage sections", () => {
  it('include the commands of the root and load-tester READMEs', () => {
    const files = new Set(cases.map(([file]) => file));
    expect(files).toContain('README.md');
    expect(files).toContain('packages/loadtest/README.md');
    expect(cases.filter(([, c]) => / --help\b/.test(c)).length).toBeGreaterThanOrEqual(5);
  });

  it.each(cases)('%s: `%s` names something this repository has', (_file, command) => {
    expect(problem(command)).toBeNull();
  });

  it.each(cases.filter(([, c]) => / --help\b/.test(c)))(
    '%s: `%s` runs from the root and prints its usage',
    async (_file, command) => {
      const [tool, ...args] = words(command);
      const { stdout, stderr } = await run(tool as string, args, { cwd: root, timeout: 30_000 });
      expect(`${stdout}${stderr}`).toMatch(/usage/i);
    },
    30_000,
  );
});

describe('links in the READMEs', () => {
  it.each(readmes)('%s links only inside the repository, to files that exist', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(text).not.toMatch(/\.\.\/shared\/|\/work\//);
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!.split('#')[0]!;
      if (target === '' || /^[a-z]+:/.test(target)) continue; // anchors and public sites
      const path = relative(root, resolve(dirname(join(root, file)), target));
      expect(path.startsWith('..'), `${file} → ${target}`).toBe(false);
      expect(existsSync(join(root, path)), `${file} → ${target}`).toBe(true);
    }
  });
});
