// Whether `npm start` and `npm run grid` may skip `pnpm install` and the build: on a tree
// already installed and built they did both every time (26 s before the demo came up). Each
// step leaves a stamp in node_modules when it succeeds; a step is skipped only when its stamp
// is newer than everything it reads. A clean clone has no stamps, so it installs and builds;
// `npm test`, `npm run build` and CI always do both (they only write the stamps).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const INSTALLED = 'node_modules/.bayou-installed';
const BUILT = 'node_modules/.bayou-built';
/** What a package's build reads besides its src/ (and the server's admin/). */
const BUILD_INPUTS = ['package.json', 'build.mjs', 'tsconfig.json'];
const ROOT_BUILD_INPUTS = ['pnpm-lock.yaml', 'tsconfig.base.json', 'scripts/build-cjs.mjs'];
const SOURCE_DIRS = ['src', 'admin'];

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The workspace's packages: packages/* and examples/* with a package.json. */
function workspaceDirs(root) {
  return ['packages', 'examples'].flatMap((group) =>
    readdirSync(join(root, group))
      .map((name) => join(root, group, name))
      .filter((dir) => existsSync(join(dir, 'package.json'))),
  );
}

/** The newest file under `dir` that a build reads (tests, dist and dependencies left out). */
function newestSource(dir, best = { path: '', ms: -1 }) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return best;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') newestSource(path, best);
    } else if (!/\.test\.tsx?$/.test(entry.name)) {
      const ms = mtime(path) ?? -1;
      if (ms > best.ms) Object.assign(best, { path, ms });
    }
  }
  return best;
}

/** Why `pnpm install` must run, or `null` when node_modules is newer than every manifest. */
export function installReason(root) {
  const installed = mtime(join(root, INSTALLED));
  if (installed === undefined) return 'not installed by this script yet';
  const manifests = [join(root, 'pnpm-lock.yaml'), join(root, 'package.json')];
  for (const dir of workspaceDirs(root)) manifests.push(join(dir, 'package.json'));
  for (const file of manifests) {
    if ((mtime(file) ?? 0) > installed) return `${relative(root, file)} changed since the last install`;
  }
  return null;
}

/** Why the build must run, or `null` when the last build is newer than every file it reads. */
export function buildReason(root) {
  const built = mtime(join(root, BUILT));
  if (built === undefined) return 'not built by this script yet';
  const newest = { path: '', ms: -1 };
  for (const file of ROOT_BUILD_INPUTS) {
    const ms = mtime(join(root, file)) ?? -1;
    if (ms > newest.ms) Object.assign(newest, { path: join(root, file), ms });
  }
  for (const dir of workspaceDirs(root)) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (manifest.scripts?.build === undefined) continue;
    if (!existsSync(join(dir, 'dist'))) return `${relative(root, dir)}/dist is missing`;
    for (const file of BUILD_INPUTS) {
      const ms = mtime(join(dir, file)) ?? -1;
      if (ms > newest.ms) Object.assign(newest, { path: join(dir, file), ms });
    }
    for (const sub of SOURCE_DIRS) newestSource(join(dir, sub), newest);
  }
  return newest.ms > built ? `${relative(root, newest.path)} changed since the last build` : null;
}

export function markInstalled(root) {
  writeFileSync(join(root, INSTALLED), `${new Date().toISOString()}\n`);
}

export function markBuilt(root) {
  writeFileSync(join(root, BUILT), `${new Date().toISOString()}\n`);
}
