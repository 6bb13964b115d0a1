import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'grid',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Builds the page and the server entry once, before any test file runs.
    globalSetup: ['test/global-setup.ts'],
  },
});
