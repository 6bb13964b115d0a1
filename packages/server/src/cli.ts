#!/usr/bin/env node
/**
 * `bayou start`: runs a standalone server. Flags override the config file, which
 * overrides the defaults. SIGTERM/SIGINT close it gracefully.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type CreateServerOptions, createServer } from './create-server.js';
import { BayouError } from './errors.js';

const USAGE = `Usage: bayou start [options]

Options:
  --port <n>               port to listen on (default 8080; 0 picks a free port)
  --host <addr>            interface to listen on (default 0.0.0.0)
  --path <path>            Bayeux endpoint path (default /bayeux)
  --config <file>          JSON file with any server option (see the README)
  --allowed-origins <list> comma-separated origins allowed to connect (default *)
  --transports <list>      comma-separated: websocket,long-polling (default both)
  --tls-key <file>         PEM key: serve https/wss (with --tls-cert)
  --tls-cert <file>        PEM certificate
  --demo-feed              serve demo price records on /demo/prices/<SYMBOL>
  --demo-symbols <n>       symbols in the demo feed (default 2000)
  --demo-rate <n>          updates per second of each watched demo subject (default 1)
  --log-level <level>      pino level: fatal|error|warn|info|debug (default info)
  -h, --help               show this help`;

function fail(message: string): never {
  process.stderr.write(`bayou: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function readConfig(file: string): CreateServerOptions {
  try {
    return JSON.parse(readFileSync(resolve(file), 'utf8')) as CreateServerOptions;
  } catch (err) {
    throw new BayouError('BAYOU_ERR_CONFIG', `cannot read config ${file}: ${(err as Error).message}`);
  }
}

function parse(argv: string[]): CreateServerOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      path: { type: 'string' },
      config: { type: 'string' },
      'allowed-origins': { type: 'string' },
      transports: { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-cert': { type: 'string' },
      'log-level': { type: 'string' },
      'demo-feed': { type: 'boolean' },
      'demo-symbols': { type: 'string' },
      'demo-rate': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (positionals[0] !== 'start')
    fail(positionals[0] ? `unknown command "${positionals[0]}"` : 'missing command');
  const options: CreateServerOptions = values.config ? readConfig(values.config) : {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      fail(`--port must be 0-65535, got "${values.port}"`);
    options.port = port;
  }
  if (values.host !== undefined) options.host = values.host;
  if (values.path !== undefined) options.path = values.path;
  if (values['allowed-origins'] !== undefined) options.allowedOrigins = values['allowed-origins'].split(',');
  if (values.transports !== undefined) {
    options.transports = values.transports.split(',') as CreateServerOptions['transports'];
  }
  if ((values['tls-key'] === undefined) !== (values['tls-cert'] === undefined)) {
    fail('--tls-key and --tls-cert go together');
  }
  if (values['tls-key'] && values['tls-cert']) {
    options.https = { key: readFileSync(values['tls-key']), cert: readFileSync(values['tls-cert']) };
  }
  if (values['demo-feed']) {
    const symbols = Number(values['demo-symbols'] ?? 2000);
    const rate = Number(values['demo-rate'] ?? 1);
    if (!(symbols > 0)) fail(`--demo-symbols must be a positive number, got "${values['demo-symbols']}"`);
    if (!(rate > 0)) fail(`--demo-rate must be a positive number, got "${values['demo-rate']}"`);
    options.demoFeed = { symbols, rate };
  }
  options.logger = { level: values['log-level'] ?? 'info' };
  return options;
}

async function main(): Promise<void> {
  let options: CreateServerOptions;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    fail((err as Error).message);
  }
  let server: Awaited<ReturnType<typeof createServer>>;
  try {
    server = await createServer(options);
  } catch (err) {
    fail((err as Error).message);
  }
  const base = await server.listen();
  process.stdout.write(`Bayou listening on ${base} (Bayeux endpoint ${base}${options.path ?? '/bayeux'})\n`);
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`bayou: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
