/**
 * Defaults of what only a standalone server has — `createServer` and `bayou start` — in one
 * place that the code, the config file's documentation and the flag table (`config/flags.ts`)
 * all read. The plugin's own options and their defaults are in `options.ts`.
 */
export const STANDALONE_DEFAULTS = Object.freeze({
  /** `createServer`'s port; `bayou start --port`. */
  port: 8080,
  /** `createServer`'s interface. */
  host: '0.0.0.0',
  /** `bayou start`'s interface while the server is open to anyone (no tokens, no connect backend). */
  openHost: '127.0.0.1',
  /** A standalone server answers health and readiness checks; an embedding app opts in. */
  healthPath: '/healthz',
  readyPath: '/readyz',
  /** ms a graceful shutdown of `bayou start` may take before the process exits anyway. */
  shutdownTimeout: 10_000,
  /** `bayou start --workers`: one process. */
  workers: 1,
  logLevel: 'info',
  logFormat: 'auto',
} as const);
