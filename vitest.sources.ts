/**
 * Tests run against sources, never a possibly stale `dist`: each workspace package's
 * bare name resolves to its `src/index.ts` inside vitest. (Packaging tests install real
 * tarballs instead.)
 */
import { fileURLToPath } from 'node:url';

const entry = (dir: string): string =>
  fileURLToPath(new URL(`./packages/${dir}/src/index.ts`, import.meta.url));

export const sourceAliases = [
  { find: /^@bayou\/protocol$/, replacement: entry('protocol') },
  { find: /^@bayou\/server$/, replacement: entry('server') },
  { find: /^@bayou\/client$/, replacement: entry('browser-client') },
];
