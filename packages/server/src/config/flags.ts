/**
 * Every command-line flag of `bayou start`, its environment variable(s), the config key it
 * sets and its default — one table that drives parsing, `--help` and the README.
 * Precedence: flags > environment > config file > defaults.
 */

import { closest, DEMO_SYMBOL_COUNT } from '@bayou/protocol';
import { REDIS_ENGINE_DEFAULTS } from '../engine/redis/redis-options.js';
import { BayouConfigError, type BayouError } from '../errors.js';
import { defaultOptions } from '../options.js';
import { DEMO_FEED_DEFAULTS } from '../records/demo-feed.js';
import { STANDALONE_DEFAULTS } from '../server-defaults.js';
import { ADMIN_FLAGS } from './admin-flags.js';
import { COMPRESSION_FLAGS } from './compression-flags.js';
import * as checks from './flag-spec.js';
import { checkedAsOption, type FlagKind, type FlagSpec, shown } from './flag-spec.js';
import { HOOK_FLAGS } from './hook-flags.js';
import { LIMIT_FLAGS } from './limit-flags.js';
import { SECURITY_FLAGS } from './security-flags.js';

export type { FlagKind, FlagSpec };

const TABLE: readonly FlagSpec[] = [
  {
    flag: 'port',
    env: ['PORT', 'BAYOU_PORT'],
    key: 'port',
    kind: 'int',
    value: '<n>',
    help: 'port to listen on (0 picks a free port)',
    default: shown(STANDALONE_DEFAULTS.port),
    check: checks.portCheck,
  },
  {
    flag: 'host',
    env: ['HOST', 'BAYOU_HOST'],
    key: 'host',
    kind: 'string',
    value: '<addr>',
    help: 'interface to listen on',
    default: `${STANDALONE_DEFAULTS.openHost} without tokens, ${STANDALONE_DEFAULTS.host} with --jwt-secret/--jwks-url or --proxy-connect-url`,
  },
  {
    flag: 'path',
    env: ['BAYOU_PATH'],
    key: 'path',
    kind: 'string',
    value: '<path>',
    help: 'Bayeux endpoint path',
    default: shown(defaultOptions.path),
  },
  {
    flag: 'config',
    env: ['BAYOU_CONFIG'],
    key: null,
    kind: 'string',
    value: '<file>',
    help: 'config file: bayou.config.mjs (export default defineConfig({...})) or JSON',
    default: 'none',
  },
  {
    flag: 'allowed-origins',
    env: ['BAYOU_ALLOWED_ORIGINS'],
    key: 'allowedOrigins',
    kind: 'list',
    value: '<list>',
    help: "comma-separated origins whose pages may connect, e.g. https://app.example.com,https://*.example.com; '*' = any origin, without cookies",
    default: 'none (same-origin pages and non-browser clients only)',
  },
  {
    flag: 'transports',
    env: ['BAYOU_TRANSPORTS'],
    key: 'transports',
    kind: 'list',
    value: '<list>',
    help: 'comma-separated connection types offered, in order: websocket,streaming,eventsource,long-polling',
    default: shown(defaultOptions.transports),
  },
  {
    flag: 'stream-max-bytes',
    env: ['BAYOU_STREAM_MAX_BYTES'],
    key: 'streamMaxBytes',
    kind: 'int',
    value: '<n>',
    help: 'bytes written into one streaming response before it is recycled (the client opens the next)',
    default: shown(defaultOptions.streamMaxBytes),
  },
  {
    flag: 'stream-max-age',
    env: ['BAYOU_STREAM_MAX_AGE'],
    key: 'streamMaxAge',
    kind: 'int',
    value: '<ms>',
    help: 'how long one streaming response stays open before it is recycled',
    default: shown(defaultOptions.streamMaxAge),
  },
  ...SECURITY_FLAGS,
  {
    flag: 'max-payload-bytes',
    env: ['BAYOU_MAX_PAYLOAD_BYTES'],
    key: 'maxPayloadBytes',
    kind: 'int',
    value: '<n>',
    help: 'largest WebSocket frame or HTTP body',
    default: shown(defaultOptions.maxPayloadBytes),
  },
  ...COMPRESSION_FLAGS,
  ...LIMIT_FLAGS,
  {
    flag: 'history-size',
    env: ['BAYOU_HISTORY_SIZE'],
    key: 'historySize',
    kind: 'int',
    value: '<n>',
    help: 'messages of history each channel keeps for recovery (0 turns it off)',
    default: shown(defaultOptions.historySize),
  },
  {
    flag: 'history-ttl',
    env: ['BAYOU_HISTORY_TTL'],
    key: 'historyTtl',
    kind: 'int',
    value: '<ms>',
    help: 'how long a message stays recoverable from history',
    default: shown(defaultOptions.historyTtl),
  },
  {
    flag: 'history-channels',
    env: ['BAYOU_HISTORY_CHANNELS'],
    key: 'historyChannels',
    kind: 'int',
    value: '<n>',
    help: 'most channels keeping history at once; past it the least recently published one loses its history',
    default: shown(defaultOptions.historyChannels),
  },
  ...HOOK_FLAGS,
  ...ADMIN_FLAGS,
  {
    flag: 'shutdown-timeout',
    env: ['BAYOU_SHUTDOWN_TIMEOUT'],
    key: 'shutdownTimeout',
    kind: 'int',
    value: '<ms>',
    help: 'how long a graceful shutdown may take before the process exits anyway',
    default: shown(STANDALONE_DEFAULTS.shutdownTimeout),
    check: checks.nonNegative,
  },
  {
    flag: 'redis',
    env: ['BAYOU_REDIS_URL'],
    key: 'redis',
    kind: 'string',
    value: '<url>',
    help: 'join a cluster of nodes sharing this Redis: redis://[user:pass@]host:port[/db], rediss:// for TLS, redis+sentinel://host:port[,host:port…]/<master name> through Sentinel',
    default: 'none (one node, in-process engine)',
    check: (v) =>
      /^(rediss?|redis\+sentinel):\/\/./.test(v as string)
        ? null
        : 'must be a redis://, rediss:// or redis+sentinel:// URL',
    secret: true,
  },
  {
    flag: 'redis-prefix',
    env: ['BAYOU_REDIS_PREFIX'],
    key: 'redisEngine.keyPrefix',
    kind: 'string',
    value: '<prefix>',
    help: 'prefix of every Redis key and pub/sub name, so several clusters can share one Redis (with --redis)',
    default: shown(REDIS_ENGINE_DEFAULTS.keyPrefix),
  },
  {
    flag: 'workers',
    env: ['BAYOU_WORKERS'],
    key: 'workers',
    kind: 'int',
    value: '<n>',
    help: 'run n worker processes on one port, each a cluster node (needs --redis)',
    default: `${STANDALONE_DEFAULTS.workers} (one process)`,
    check: (v) => ((v as number) >= 1 && (v as number) <= 256 ? null : 'must be 1-256'),
  },
  {
    flag: 'demo-feed',
    env: ['BAYOU_DEMO_FEED'],
    key: 'demoFeed',
    kind: 'bool',
    help: 'serve demo price records on /demo/prices/<SYMBOL>',
    default: 'false',
  },
  {
    flag: 'demo-symbols',
    env: ['BAYOU_DEMO_SYMBOLS'],
    key: 'demoSymbols',
    kind: 'int',
    value: '<n>',
    help: `symbols in the demo feed (AAA, AAB, …), at most ${DEMO_SYMBOL_COUNT}`,
    default: shown(DEMO_FEED_DEFAULTS.symbols),
    check: (v) =>
      Number.isInteger(v) && (v as number) >= 1 && (v as number) <= DEMO_SYMBOL_COUNT
        ? null
        : `must be 1-${DEMO_SYMBOL_COUNT} (the symbols AAA…ZZZ)`,
  },
  {
    flag: 'demo-rate',
    env: ['BAYOU_DEMO_RATE'],
    key: 'demoRate',
    kind: 'number',
    value: '<n>',
    help: 'updates per second of each watched demo subject',
    default: shown(DEMO_FEED_DEFAULTS.rate),
    check: checks.positive,
  },
  {
    flag: 'log-level',
    env: ['BAYOU_LOG_LEVEL'],
    key: 'logLevel',
    kind: 'string',
    value: '<level>',
    help: 'fatal|error|warn|info|debug|trace|silent',
    default: STANDALONE_DEFAULTS.logLevel,
    check: checks.oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  },
  {
    flag: 'log-format',
    env: ['BAYOU_LOG_FORMAT'],
    key: 'logFormat',
    kind: 'string',
    value: '<fmt>',
    help: 'auto (pretty on a terminal, JSON otherwise) | pretty | json',
    default: STANDALONE_DEFAULTS.logFormat,
    check: checks.oneOf('auto', 'pretty', 'json'),
  },
];

/** A flag setting a number option is checked by the option's range (`defaults.ts`). */
export const FLAGS: readonly FlagSpec[] = TABLE.map(checkedAsOption);

/** Flags that are not options. */
const COMMAND_FLAGS = ['help', 'version'];

export function usage(): string {
  const rows = FLAGS.map((f) => {
    const left = `  --${f.flag}${f.value ? ` ${f.value}` : ''}`;
    return `${left.padEnd(30)} ${f.help}\n${' '.repeat(31)}(default ${f.default}; env ${f.env.join(' or ')})`;
  });
  return `Usage: npx @bayou/server start [options]
       npx @bayou/server --version
(With @bayou/server installed in your project the command is also "bayou": bayou start.)

Every option can also be set by its environment variable or in the config file;
flags win over the environment, which wins over the file.

Options:
${rows.join('\n')}
  -v, --version                print the version
  -h, --help                   show this help`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

function convert(spec: FlagSpec, raw: string, where: string): unknown {
  let value: unknown;
  const shown = spec.secret ? '(hidden)' : `"${raw}"`;
  switch (spec.kind) {
    case 'string':
      value = spec.parse === undefined ? raw : spec.parse(raw);
      break;
    case 'int':
      value = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
      if (!Number.isInteger(value))
        throw new UsageError(
          `${where} ${spec.check?.(Number.NaN) ?? 'must be a whole number'}, got ${shown}`,
        );
      break;
    case 'number':
      value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value))
        throw new UsageError(`${where} must be a number, got ${shown}`);
      break;
    case 'bool': {
      const t = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(t)) value = true;
      else if (['0', 'false', 'no', 'off', ''].includes(t)) value = false;
      else throw new UsageError(`${where} must be true or false, got ${shown}`);
      break;
    }
    case 'list':
      value = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      break;
  }
  const problem = spec.check?.(value);
  if (problem) throw new UsageError(`${where} ${problem}, got ${shown}`);
  return value;
}

/** Sets `a.b.c` in `target`. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (node[part] === undefined || node[part] === null || typeof node[part] !== 'object') node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

export interface ParsedArgs {
  command: string | undefined;
  help: boolean;
  version: boolean;
  configPath: string | undefined;
  /** The options the flags set, as a partial config. */
  layer: Record<string, unknown>;
}

/** Parses `argv` (without `node` and the script): `--flag value`, `--flag=value`, boolean `--flag`. */
export function parseFlags(argv: readonly string[]): ParsedArgs {
  const out: ParsedArgs = {
    command: undefined,
    help: false,
    version: false,
    configPath: undefined,
    layer: {},
  };
  const names = [...FLAGS.map((f) => f.flag), ...COMMAND_FLAGS];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (arg === '-v' || arg === '--version') {
      out.version = true;
      continue;
    }
    if (!arg.startsWith('-')) {
      if (out.command !== undefined) throw new UsageError(`unexpected argument "${arg}"`);
      out.command = arg;
      continue;
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = FLAGS.find((f) => f.flag === name);
    if (spec === undefined) {
      const near = closest(name, names);
      throw new UsageError(`unknown flag --${name}${near ? `; did you mean --${near}?` : ''}`);
    }
    let raw: string;
    if (eq >= 0) raw = body.slice(eq + 1);
    else if (spec.kind === 'bool') raw = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2))
        throw new UsageError(`--${spec.flag} needs a value`);
      raw = next;
      i++;
    }
    const value = convert(spec, raw, `--${spec.flag}`);
    if (spec.key === null) out.configPath = value as string;
    else setPath(out.layer, spec.key, value);
  }
  return out;
}

export interface EnvLayer {
  configPath: string | undefined;
  layer: Record<string, unknown>;
  /** `BAYOU_*` variables that match no flag, with a suggestion. */
  warnings: string[];
}

/** Reads the environment variables of every flag; unknown `BAYOU_*` names give warnings. */
export function parseEnv(env: Readonly<Record<string, string | undefined>>): EnvLayer {
  const out: EnvLayer = { configPath: undefined, layer: {}, warnings: [] };
  for (const spec of FLAGS) {
    const name = spec.env.find((e) => env[e] !== undefined && env[e] !== '');
    if (name === undefined) continue;
    const value = convert(spec, env[name] as string, name);
    if (spec.key === null) out.configPath = value as string;
    else setPath(out.layer, spec.key, value);
  }
  const known = FLAGS.flatMap((f) => f.env);
  for (const name of Object.keys(env)) {
    if (!name.startsWith('BAYOU_') || known.includes(name)) continue;
    const near = closest(name, known);
    out.warnings.push(`unknown environment variable ${name}${near ? `; did you mean ${near}?` : ''}`);
  }
  return out;
}

export function configError(message: string): BayouError {
  return new BayouConfigError('BAYOU_ERR_CONFIG', message);
}
