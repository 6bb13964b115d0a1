import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'loadtest',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
