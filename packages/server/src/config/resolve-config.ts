/**
 * Resolves the configuration of `bayou start` from its four sources, highest first:
 * command-line flags, environment variables, the config file, the defaults.
 */
import type { BayouConfig } from './define-config.js';
import { type ParsedArgs, parseEnv, parseFlags } from './flags.js';
import { loadConfigFile } from './load-config.js';

export interface ResolvedCli {
  command: string | undefined;
  help: boolean;
  version: boolean;
  config: BayouConfig;
  configPath: string | undefined;
  warnings: string[];
}

/** Keys whose object values merge across sources instead of replacing each other. */
const MERGED = new Set(['tokens', 'tls', 'publishApi', 'redisEngine', 'limits', 'webhooks']);

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v);
}

/**
 * `proxy` merges one level deeper: a flag's `proxy.connect.url` keeps the file's
 * `proxy.connect.timeout` and `headers` (a hook given as a bare URL string counts as `{ url }`).
 */
function mergeProxy(low: Record<string, unknown>, high: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...low };
  for (const [hook, value] of Object.entries(high)) {
    const before = typeof low[hook] === 'string' ? { url: low[hook] } : low[hook];
    out[hook] = isPlain(value) && isPlain(before) ? { ...before, ...value } : value;
  }
  return out;
}

/** `high` over `low`; a higher `tokens.secret` or `tokens.jwksUrl` replaces the other kind too. */
export function mergeLayers(
  low: Record<string, unknown>,
  high: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...low };
  for (const [key, value] of Object.entries(high)) {
    if (value === undefined) continue;
    if (key === 'proxy' && isPlain(value) && isPlain(out[key])) {
      out[key] = mergeProxy(out[key] as Record<string, unknown>, value);
    } else if (MERGED.has(key) && isPlain(value) && isPlain(out[key])) {
      const merged = { ...(out[key] as Record<string, unknown>), ...value };
      if (key === 'tokens') {
        if (value.secret !== undefined && value.jwksUrl === undefined) delete merged.jwksUrl;
        if (value.jwksUrl !== undefined && value.secret === undefined) delete merged.secret;
      }
      out[key] = merged;
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Folds the CLI-only `demoSymbols`/`demoRate` into `demoFeed`. */
function foldDemo(config: Record<string, unknown>): void {
  const { demoSymbols, demoRate } = config;
  delete config.demoSymbols;
  delete config.demoRate;
  if (!config.demoFeed) return;
  const base = isPlain(config.demoFeed) ? config.demoFeed : {};
  config.demoFeed = {
    ...base,
    ...(demoSymbols !== undefined ? { symbols: demoSymbols } : {}),
    ...(demoRate !== undefined ? { rate: demoRate } : {}),
  };
}

export async function resolveCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd = process.cwd(),
): Promise<ResolvedCli> {
  const flags: ParsedArgs = parseFlags(argv);
  const fromEnv = parseEnv(env);
  const configPath = flags.configPath ?? fromEnv.configPath;
  const file = configPath !== undefined ? await loadConfigFile(configPath, cwd) : {};
  const config = mergeLayers(mergeLayers(file, fromEnv.layer), flags.layer);
  foldDemo(config);
  return {
    command: flags.command,
    help: flags.help,
    version: flags.version,
    config: config as BayouConfig,
    configPath,
    warnings: fromEnv.warnings,
  };
}
