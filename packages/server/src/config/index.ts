export { type BuiltServer, buildServer, loggerFor } from './build-server.js';
export { type BayouConfig, defineConfig, type LogFormat } from './define-config.js';
export { FLAGS, type FlagSpec, parseEnv, parseFlags, UsageError, usage } from './flags.js';
export { loadConfigFile } from './load-config.js';
export { mergeLayers } from './merge-layers.js';
export { type ResolvedCli, resolveCli } from './resolve-config.js';
