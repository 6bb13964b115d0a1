import { defineConfig } from 'vitest/config';

// One run over every package; each package may refine its own settings in its vitest.config.ts.
export default defineConfig({
  test: {
    projects: ['packages/*', 'examples/*', 'packages/react-bindings/test-react18'],
  },
});
