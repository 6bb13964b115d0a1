/**
 * @bayou/react's tests on React 18. The tests and the sources are the package's own
 * (../test, ../src); `react` and `react-dom` resolve to this folder's React 18 install
 * instead of the package's React 19.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineProject } from 'vitest/config';

const here = dirname(fileURLToPath(import.meta.url));

export default defineProject({
  resolve: {
    alias: [
      { find: /^react$/, replacement: join(here, 'node_modules/react/index.js') },
      { find: /^react\/(.*)$/, replacement: join(here, 'node_modules/react/$1.js') },
      { find: /^react-dom$/, replacement: join(here, 'node_modules/react-dom/index.js') },
      { find: /^react-dom\/(.*)$/, replacement: join(here, 'node_modules/react-dom/$1.js') },
    ],
  },
  test: {
    name: 'react18',
    env: { BAYOU_REACT_MAJOR: '18' },
    root: join(here, '..'),
    environment: 'happy-dom',
    include: ['test/**/*.test.{ts,tsx}'],
    // The README example and the shared-connection tabs run in Chromium once, in the React 19 project.
    exclude: [...configDefaults.exclude, 'test/readme-example.test.ts', 'test/shared-chromium.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
