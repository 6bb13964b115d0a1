/**
 * The keys a config file of `bayou start` may hold, checked when it is loaded so that a
 * typo is told as a flag's is: `unknown option(s) in config bayou.config.json: prot (did
 * you mean port?)`. The plugin's own options are whatever its resolver accepts (asked, not
 * listed here, so a new option is never refused); the rest are the standalone server's.
 */
import { BayouConfigError } from '../errors.js';
import { rejectUnknownKeys } from '../option-errors.js';
import { defaultOptions, resolveOptions } from '../options.js';
import { FLAGS } from './flags.js';

/** `createServer`'s, the plugin's engine keys, `BayouConfig`'s own, and the plugin's hooks. */
const STANDALONE_KEYS = [
  'host',
  'port',
  'logger',
  'https',
  'demoFeed',
  'trustProxy',
  'engine',
  'redis',
  'redisEngine',
  'tls',
  'tokens',
  'channels',
  'allowAnonymous',
  'apiKey',
  'publishApi',
  'workers',
  'shutdownTimeout',
  'logLevel',
  'logFormat',
  'admin',
  'authenticate',
  'canSubscribe',
  'canPublish',
  'auth',
  'metricsRegistry',
  'webhooks',
  'proxy',
];

/** Keys of the groups only `bayou start` reads, which no other resolver checks. */
const GROUP_KEYS: Record<string, readonly string[]> = {
  admin: ['enabled', 'password'],
  tls: ['key', 'cert'],
  publishApi: ['path', 'bodyLimit', 'maxMessageBytes', 'maxBatchMessages'],
};

function pluginAccepts(key: string): boolean {
  try {
    resolveOptions({ [key]: undefined });
    return true;
  } catch (err) {
    return !(err instanceof BayouConfigError && err.code === 'BAYOU_ERR_UNKNOWN_OPTION');
  }
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Throws `BAYOU_ERR_UNKNOWN_OPTION` for a key of the file no part of the server reads,
 * naming the closest known key (the flags' keys count too: `demoSymbols`).
 */
export function checkConfigKeys(config: Record<string, unknown>, file: string): void {
  const known = [
    ...STANDALONE_KEYS,
    ...Object.keys(defaultOptions),
    ...FLAGS.flatMap((f) => (f.key === null ? [] : [f.key.split('.')[0] as string])),
  ];
  const unknown = Object.keys(config).filter((k) => !known.includes(k) && !pluginAccepts(k));
  rejectUnknownKeys(Object.fromEntries(unknown.map((k) => [k, true])), known, `config ${file}`);
  for (const [group, keys] of Object.entries(GROUP_KEYS)) {
    const value = config[group];
    if (isPlain(value)) rejectUnknownKeys(value, keys, `config ${file}: ${group}`);
  }
}
