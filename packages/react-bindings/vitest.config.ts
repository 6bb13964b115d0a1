import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'react',
    env: { BAYOU_REACT_MAJOR: '19' },
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}', 'test/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
