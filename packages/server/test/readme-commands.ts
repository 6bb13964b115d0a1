/**
 * The shell commands the READMEs show, and how the docs test runs each one here — or why it
 * cannot (a whole-repository task, a registry install, Redis, certificate files, minutes of
 * load). Every command gets one of the two: a command nobody classified fails the test.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * Where the files a README's commands make (a test certificate) are made, and where the
 * servers that read them start: `openssl req … -keyout key.pem` then `--tls-key key.pem`.
 */
export const FILES_DIR = mkdtempSync(join(tmpdir(), 'bayou-readme-'));

export interface ReadmeCommand {
  /** The README, relative to the repository root. */
  file: string;
  /** The command as the README shows it (continuations joined, comment and `&` dropped). */
  line: string;
  /** Leading `NAME=value` assignments. */
  env: Record<string, string>;
  words: string[];
}

/**
 * How a command runs here: a CLI's help, a server (or app) that must come up, a flag check,
 * a command that makes files the others read (run first, to exit 0).
 */
export type Plan =
  | { kind: 'make'; argv: string[]; cwd: string }
  | { kind: 'help'; argv: string[]; cwd: string }
  | {
      kind: 'serve';
      argv: string[];
      cwd: string;
      env: Record<string, string>;
      /** `LOCAL_REDIS` in `argv`/`env` stands for a Redis the test starts. */
      redis?: boolean;
    }
  | { kind: 'flags'; argv: string[]; cwd: string }
  | { kind: 'skip'; reason: string };

/** Every README (root, packages, examples) and docs/*.md. */
export function readmes(): string[] {
  const files = ['README.md'];
  for (const group of ['packages', 'examples']) {
    for (const name of readdirSync(join(ROOT, group))) files.push(`${group}/${name}/README.md`);
  }
  for (const name of readdirSync(join(ROOT, 'docs'))) if (name.endsWith('.md')) files.push(`docs/${name}`);
  return files.filter((f) => {
    try {
      readFileSync(join(ROOT, f));
      return true;
    } catch {
      return false;
    }
  });
}

/** Splits a shell line into words, honouring single and double quotes. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | null = null;
  let any = false;
  for (const c of line) {
    if (quote !== null) {
      if (c === quote) quote = null;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      any = true;
    } else if (c === ' ' || c === '\t') {
      if (any || word !== '') words.push(word);
      word = '';
      any = false;
    } else word += c;
  }
  if (any || word !== '') words.push(word);
  return words;
}

/** The commands of a README's ```sh blocks, every one (a command nobody plans fails the test). */
export function commandsOf(file: string): ReadmeCommand[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const commands: ReadmeCommand[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    const joined = (block[1] as string).replace(/\\\n\s*/g, '');
    for (const raw of joined.split('\n')) {
      const line = raw
        .replace(/\s+#\s.*$/, '')
        .replace(/\s*&$/, '')
        .trim();
      if (line === '' || line.startsWith('#')) continue;
      const words = shellWords(line);
      const env: Record<string, string> = {};
      while (words.length > 0 && /^[A-Z_]+=/.test(words[0] as string)) {
        const [name, ...value] = (words.shift() as string).split('=');
        env[name as string] = value.join('=');
      }
      commands.push({ file, line, env, words });
    }
  }
  return commands;
}

/** The workspace package named `name` and its one bin, e.g. `@bayou/server` → packages/server/bin/bayou.js. */
function binOf(name: string): string | null {
  for (const group of ['packages', 'examples']) {
    for (const dir of readdirSync(join(ROOT, group))) {
      let manifest: { name?: string; bin?: Record<string, string> };
      try {
        manifest = JSON.parse(readFileSync(join(ROOT, group, dir, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      const bins = Object.values(manifest.bin ?? {});
      if (manifest.name === name && bins.length === 1) return join(ROOT, group, dir, bins[0] as string);
    }
  }
  return null;
}

/** A README placeholder's stand-in: secrets, ports, tokens. */
function fill(word: string): string {
  return word
    .replace(/^\.\.\.$/, 'docs-test-value-that-is-longer-than-32-chars')
    .replace(/<port>/g, '1')
    .replace(/<url>/g, 'http://127.0.0.1:1/bayeux')
    .replace(/<(jwt|token)>/g, 'x.y.z');
}

/** Listening on loopback, on a port of its own: `--port N` becomes `--port 0`, `--host 127.0.0.1` added. */
function onLoopback(args: string[]): string[] {
  const out = args.map((w, i) => (args[i - 1] === '--port' ? '0' : w));
  if (!out.includes('--port')) out.push('--port', '0');
  if (!out.includes('--host')) out.push('--host', '127.0.0.1');
  return out;
}

const SKIPPED: [RegExp, string][] = [
  [
    /^npm (start|test|run (build|grid))\b/,
    'a whole-repository task (install, build, every test): CI runs it',
  ],
  [
    /^npm install\b/,
    'an install from the npm registry (not published yet; the packaging test installs tarballs)',
  ],
  [/^npx -y pnpm@/, "rebuilds an example: the repository's build does"],
  [
    /^npx esbuild\b/,
    'bundles the React example: packages/react-bindings/test/readme-example.test.ts runs it',
  ],
  [/^curl\b/, 'the server API by hand: server-api and openapi tests cover it'],
  [/^npx vitest\b/, 'runs a test suite: npm test runs it'],
  [/^node (--cpu-prof\b|bench\/)/, 'a benchmark: minutes of load, run by npm run bench'],
  [/^bash packages\/loadtest\/bench\//, 'an idle-sessions run: minutes to an hour of load'],
  [
    /^docker compose\b/,
    'builds images and runs a cluster in containers (minutes); cluster-nginx.test.ts runs its balancer config',
  ],
];

/** The Redis a README's command names on this machine; the docs test starts one for it. */
const README_REDIS = 'redis://127.0.0.1:6379';
export const LOCAL_REDIS = '<local-redis>';

/** A `bayou start` on Redis: on the local one, a Redis of the test's; elsewhere, skipped. */
function onRedis(args: string[], env: Record<string, string>, serve: Plan): Plan {
  const urls = [...args.filter((_, i) => args[i - 1] === '--redis'), env.BAYOU_REDIS_URL ?? README_REDIS];
  if (urls.some((u) => u !== README_REDIS))
    return {
      kind: 'skip',
      reason: 'a Redis elsewhere (a host name, TLS, Sentinel): the Redis engine tests run them',
    };
  if (args.includes('--workers'))
    return {
      kind: 'skip',
      reason: 'six worker processes: cluster-cli.test.ts runs --workers 2 on a local Redis',
    };
  if (serve.kind !== 'serve') return serve;
  const local = (w: string) => (w === README_REDIS ? LOCAL_REDIS : w);
  const localEnv = Object.fromEntries(Object.entries(serve.env).map(([k, v]) => [k, local(v)]));
  return { ...serve, argv: serve.argv.map(local), env: localEnv, redis: true };
}

export function plan(command: ReadmeCommand): Plan {
  const { words, env } = command;
  const cwd = join(ROOT, dirname(command.file));
  // A script's own --help runs, even a benchmark's: it prints its usage and exits.
  if (words[0] === 'node' && /^bench\/[\w-]+\.mjs$/.test(words[1] ?? '') && words[2] === '--help')
    return { kind: 'help', argv: words, cwd };
  // Matched without the environment assignments in front.
  const bare = words.join(' ');
  for (const [pattern, reason] of SKIPPED) if (pattern.test(bare)) return { kind: 'skip', reason };
  if (words[0] === 'openssl' && words[1] === 'req') return { kind: 'make', argv: words, cwd: FILES_DIR };
  if (words[0] === 'npm' && words[1] === '--prefix' && words[3] === 'start') {
    return {
      kind: 'serve',
      argv: ['npm', ...words.slice(1)],
      cwd: ROOT,
      env: { PORT: '0', HOST: '127.0.0.1' },
    };
  }
  if (words[0] === 'node' && words[1] === 'dist/server.js') {
    return {
      kind: 'serve',
      argv: ['node', 'dist/server.js'],
      cwd,
      env: { ...env, PORT: '0', HOST: '127.0.0.1' },
    };
  }
  if (words[0] !== 'npx') return { kind: 'skip', reason: '' }; // unclassified: the test fails on it
  const bin = binOf(words[1] as string);
  if (bin === null) return { kind: 'skip', reason: '' };
  const args = words.slice(2).map(fill);
  if (args.includes('--help')) return { kind: 'help', argv: ['node', bin, ...args], cwd: ROOT };
  if (words[1] === '@bayou/server' && args[0] === 'start') {
    const filled = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v)]));
    // Its certificate files are the ones the README's openssl line made there.
    const at = args.includes('--tls-key') ? FILES_DIR : ROOT;
    const serve: Plan = { kind: 'serve', argv: ['node', bin, ...onLoopback(args)], cwd: at, env: filled };
    return args.includes('--redis') || 'BAYOU_REDIS_URL' in env ? onRedis(args, env, serve) : serve;
  }
  if (words[1] === '@bayou/loadtest' && ['chat', 'feed', 'connections'].includes(args[0] as string)) {
    // A run lasts from 10 s to minutes: its flags and values are checked (parsed, resolved), not run.
    return { kind: 'flags', argv: ['node', bin, ...args, '--help'], cwd: ROOT };
  }
  if (words[1] === '@bayou/loadtest' && args[0] === 'chaos') {
    return { kind: 'skip', reason: 'a chaos run lasts minutes (its CLI is tested by chaos-cli.test.ts)' };
  }
  return { kind: 'skip', reason: '' };
}

export const where = (c: ReadmeCommand): string => `${c.file}: ${c.line}`;
export const rel = (path: string): string => relative(ROOT, path);
