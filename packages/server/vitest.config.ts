import { defineProject } from 'vitest/config';
import { sourceAliases } from '../../vitest.sources.js';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'server',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
