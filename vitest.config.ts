import { defineConfig } from 'vitest/config';

// One run over every package; each package may refine its own settings in its vitest.config.ts.
export default defineConfig({
  test: {
    // Two test files at a time: most of the suite's time is spent waiting on sockets, timers
    // and child processes, not on the CPU (one worker took 990 s on a loaded 2-core machine,
    // two 414 s in the same conditions).
    maxWorkers: 2,
    projects: ['packages/*', 'examples/*', 'packages/react-bindings/test-react18'],
  },
});
