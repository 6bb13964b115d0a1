/**
 * Resolves the configuration of `bayou start` from its four sources, highest first:
 * command-line flags, environment variables, the config file, the defaults.
 */
import { checkConfigKeys } from './config-keys.js';
import type { BayouConfig } from './define-config.js';
import { configError, type ParsedArgs, parseEnv, parseFlags } from './flags.js';
import { loadConfigFile } from './load-config.js';
import { isPlain, mergeLayers } from './merge-layers.js';

export interface ResolvedCli {
  command: string | undefined;
  help: boolean;
  version: boolean;
  config: BayouConfig;
  configPath: string | undefined;
  warnings: string[];
}

/**
 * Folds the CLI-only `demoSymbols`/`demoRate` into `demoFeed`; without the feed they would
 * do nothing, so they are refused with the flag that turns it on.
 */
function foldDemo(config: Record<string, unknown>): void {
  const { demoSymbols, demoRate } = config;
  delete config.demoSymbols;
  delete config.demoRate;
  if (!config.demoFeed) {
    if (demoSymbols !== undefined || demoRate !== undefined)
      throw configError(
        '--demo-symbols and --demo-rate (BAYOU_DEMO_SYMBOLS, BAYOU_DEMO_RATE) shape the demo feed, which is off: add --demo-feed (BAYOU_DEMO_FEED=1)',
      );
    return;
  }
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
  if (configPath !== undefined) checkConfigKeys(file, configPath);
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
