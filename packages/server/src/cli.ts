#!/usr/bin/env node
/**
 * `bayou start`: runs a standalone server configured by flags, environment variables and
 * a config file (in that order of precedence; see `config/flags.ts`). The first SIGTERM or
 * SIGINT closes it gracefully within `shutdownTimeout`; a second one exits at once. With
 * `--workers N` (and `--redis`) this process becomes the primary of N worker processes,
 * each running the same server as a node of the cluster (see `cluster/workers.ts`).
 */
import { readFileSync } from 'node:fs';
import {
  isWorker,
  onPrimaryShutdown,
  reportListening,
  reportStartFailure,
  runWorkers,
} from './cluster/workers.js';
import type { BuiltServer } from './config/build-server.js';
import type { BayouConfig } from './config/define-config.js';
import { UsageError, usage } from './config/flags.js';
import { primaryLog } from './config/primary-log.js';
import { type ResolvedCli, resolveCli } from './config/resolve-config.js';
import { type ListenTarget, startupFailure } from './config/startup-failure.js';
import { consoleLine, engineLine } from './config/startup-log.js';
import { tuneRuntime, workerForkOptions } from './runtime-tuning.js';
import { STANDALONE_DEFAULTS } from './server-defaults.js';

export const WORKERS_NEED_REDIS =
  '--workers needs --redis (or BAYOU_REDIS_URL): each worker is a separate node with its own sessions, ' +
  'and only a shared Redis lets workers forward a long-poll to the worker that holds its session and ' +
  'deliver a message published on one worker to subscribers on the others';

/** Why this process cannot start: its one line, written (or sent to the primary) by `failed`. */
class StartFailure extends Error {}

/** One line on stderr, exit code 2; `withUsage` adds where every option is listed. */
function fail(message: string, withUsage: boolean): never {
  throw new StartFailure(
    `bayou: ${message}${withUsage ? ' (npx @bayou/server --help lists every option)' : ''}`,
  );
}

/**
 * Ends the process with code 2 and its one line: on stderr, or, in a worker, sent to the
 * primary, which writes the first such line once however many workers fail the same way.
 */
function failed(line: string): void {
  if (isWorker() && reportStartFailure(line, () => process.exit(2))) return;
  process.stderr.write(`${line}\n`);
  process.exit(2);
}

function warnPlain(warnings: readonly string[]): void {
  for (const w of warnings) process.stderr.write(`bayou: warning: ${w}\n`);
}

/** A start-up failure: one line with the fix, exit code 2; the stack too at `--log-level debug`. */
function failStart(err: unknown, target: ListenTarget, config: BayouConfig): never {
  if (config.logLevel === 'debug' || config.logLevel === 'trace')
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  fail(startupFailure(err, target), false);
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

async function main(): Promise<void> {
  let cli: ResolvedCli;
  try {
    cli = await resolveCli(process.argv.slice(2));
  } catch (err) {
    // A bad value names its flag and range; an unknown flag or command gets the help's name.
    const message = (err as Error).message;
    fail(message, err instanceof UsageError && message.startsWith('unknown flag'));
  }
  if (cli.version) {
    process.stdout.write(`${version()}\n`);
    return;
  }
  if (cli.help) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  if (cli.command !== 'start')
    fail(cli.command ? `unknown command "${cli.command}"; the command is "start"` : 'missing command', true);
  const worker = isWorker();
  const workers = cli.config.workers ?? STANDALONE_DEFAULTS.workers;
  if (workers > 1 && cli.config.redis === undefined) fail(WORKERS_NEED_REDIS, false);
  if (workers > 1 && !worker) {
    warnPlain(cli.warnings);
    await runWorkers({
      count: workers,
      shutdownTimeout: cli.config.shutdownTimeout ?? STANDALONE_DEFAULTS.shutdownTimeout,
      // A small young generation and a malloc that keeps less, for each worker (runtime-tuning.ts).
      ...workerForkOptions(),
      ...primaryLog(cli.config, Boolean(process.stdout.isTTY)),
    });
    return;
  }

  // This process is the server's own: V8 settings for it (runtime-tuning.ts).
  tuneRuntime();
  const port = cli.config.port ?? STANDALONE_DEFAULTS.port;
  let built: BuiltServer;
  try {
    // Loaded here, not at the top: a cluster's primary serves no client and needs none of it.
    const { buildServer } = await import('./config/build-server.js');
    built = await buildServer(cli.config);
  } catch (err) {
    if (!worker) warnPlain(cli.warnings);
    failStart(err, { host: cli.config.host ?? 'the default host', port }, cli.config);
  }
  const { server, posture, shutdownTimeout, host, logsJson } = built;
  const log = server.app.log;
  if (!worker) {
    if (logsJson) for (const w of cli.warnings) log.warn(w);
    else warnPlain(cli.warnings);
  }
  // Handlers first: a signal during start-up, or right after the line below, is handled.
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) {
      process.stderr.write(`bayou: ${signal} again: exiting without waiting\n`);
      process.exit(130);
    }
    closing = true;
    log.info({ signal, shutdownTimeout }, 'shutting down (send the signal again to exit at once)');
    const timer = setTimeout(() => {
      process.stderr.write(`bayou: graceful shutdown took longer than ${shutdownTimeout} ms: exiting\n`);
      process.exit(1);
    }, shutdownTimeout);
    timer.unref();
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // The primary asks once; a signal from the terminal may have asked already.
  if (worker) onPrimaryShutdown(() => closing || shutdown('shutdown request'));
  let base: string;
  try {
    base = await server.listen();
  } catch (err) {
    await server.close().catch(() => undefined);
    failStart(err, { host, port }, cli.config);
  }
  const path = cli.config.path ?? '/bayeux';
  const listening = `Bayou listening on ${base} (Bayeux endpoint ${base}${path})`;
  if (worker) reportListening(`${base} (Bayeux endpoint ${base}${path})`);
  // The line tools and tests wait for: shown at any log level, as JSON when the log is.
  else if (logsJson)
    log.child({}, { level: 'info' }).info({ url: base, endpoint: `${base}${path}` }, listening);
  else process.stdout.write(`${listening}\n`);
  const nodeId = server.bayou.nodeId;
  log.info({ configFile: cli.configPath, ...(worker ? { nodeId } : {}) }, posture);
  const engine = engineLine(cli.config, nodeId);
  log.info(engine.fields, engine.msg);
  const admin = consoleLine(cli.config, base);
  if (admin !== null) log.info(admin.fields, admin.msg);
}

main().catch((err: unknown) => {
  failed(err instanceof StartFailure ? err.message : `bayou: ${startupFailure(err, { host: '?', port: 0 })}`);
});
