/**
 * Every default of the server in one definition, and the range of every number option
 * beside it. The plugin's options (`options.ts`), its `limits`, what only a standalone
 * server has (`createServer`, `bayou start`), the Redis and memory engines, webhooks, proxy
 * hooks and the demo feed all read their defaults here; the flag table (`config/flags.ts`)
 * shows them in `bayou start --help`, checks a flag's value by the same range as the option
 * it sets, and a test ties the README's tables to both (`config/flag-defaults.test.ts`).
 *
 * No import of the server's modules: everything else imports this.
 */
import { DEFAULTS as PROTOCOL } from '@bayou/protocol';
import { TRANSPORT_NAMES } from './types.js';

const deepFreeze = <T extends object>(o: T): T => {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) deepFreeze(v);
  return Object.freeze(o);
};

const MiB = 1024 * 1024;

/** The plugin's options (`BayouOptions`), but `maxConnections`, which depends on the machine. */
const plugin = {
  path: PROTOCOL.path,
  transports: [...TRANSPORT_NAMES],
  streamMaxBytes: MiB,
  streamMaxAge: 60_000,
  timeout: PROTOCOL.timeout,
  interval: 0,
  maxInterval: PROTOCOL.maxInterval,
  longPollDelay: 3,
  sweepInterval: 1_000,
  maxSessionsPerBrowser: 1,
  multiSessionInterval: 2_000,
  allowedOrigins: [] as string[],
  maxPayloadBytes: PROTOCOL.maxPayloadBytes,
  maxBatchMessages: PROTOCOL.maxBatchMessages,
  compression: false,
  compressionThreshold: 256,
  maxSubscriptionsPerSession: 1_000,
  maxQueuedMessages: 10_000,
  maxQueuedBytes: 8 * MiB,
  handshakeTimeout: 10_000,
  /** ms between the pings of a WebSocket whose session negotiated the heartbeat (`0` = no heartbeat). */
  heartbeatInterval: 30_000,
  /** ms a heartbeat session's `/meta/connect` is held on its WebSocket (instead of `timeout`). */
  heartbeatTimeout: 300_000,
  /** A paced drain's window (ms): sessions end spread over it at shutdown (`0` = at once). */
  drainSpread: 5_000,
  /** Handshakes a node admits a second (`0` = no limit); past it, retry advice. */
  maxHandshakeRate: 1_000,
  maxConnectionsPerIp: 0,
  maxBufferedBytes: 8 * MiB,
  providerLinger: 5_000,
  providerLease: 10_000,
  historySize: 100,
  historyTtl: 120_000,
  historyChannels: 100_000,
  metricsPath: '/metrics' as string | false,
  /** Opt-in inside an app; the standalone server turns them on (`standalone`). */
  healthPath: false as string | false,
  readyPath: false as string | false,
  /** Without `auth.tokens`; with them, `false` (decided in `resolveOptions`). */
  trustClientSession: true,
};

export const SERVER_DEFAULTS = deepFreeze({
  plugin,
  /** `limits`: per-session publish rate, per-IP sessions and handshakes (`0` = off). */
  limits: {
    publishRate: 2000,
    publishBurst: 4000,
    maxSessionsPerIp: 10_000,
    handshakeRate: 1000,
    handshakeBurst: 2000,
  },
  /** What only `createServer` and `bayou start` have. */
  standalone: {
    /** `createServer`'s port; `bayou start --port`. */
    port: 8080,
    /** `createServer`'s interface. */
    host: '0.0.0.0',
    /** `bayou start`'s interface while the server is open to anyone (no tokens, no connect backend). */
    openHost: '127.0.0.1',
    healthPath: '/healthz',
    readyPath: '/readyz',
    /** ms a graceful shutdown of `bayou start` may take before the process exits anyway. */
    shutdownTimeout: 10_000,
    /** `bayou start --workers`: one process. */
    workers: 1,
    logLevel: 'info',
    logFormat: 'auto',
  },
  /** `redisEngine` (`RedisEngine`'s options). */
  redisEngine: {
    url: null as string | null,
    keyPrefix: 'bayou:',
    heartbeatMs: 1000,
    nodeTtlMs: 5000,
    commandTimeoutMs: 5000,
    epochTtlMs: 120_000,
    historyChannels: plugin.historyChannels,
    batchWindowMs: 1,
    probeIntervalMs: 5000,
    replicaAcks: null as number | null,
    replicaAckTimeoutMs: 500,
  },
  /** The in-process engine's history bounds: the plugin's. */
  memoryEngine: {
    historyChannels: plugin.historyChannels,
    historyTtl: plugin.historyTtl,
    sweepInterval: plugin.sweepInterval,
  },
  /** `webhooks`, but `url`, `secret` and `headers`. */
  webhooks: {
    batchWindow: 250,
    batchSize: 100,
    timeout: 5_000,
    retryFor: 300_000,
    maxRetryDelay: 30_000,
    maxQueued: 10_000,
    /** How often dead nodes' channels are freed (ms), with or without webhooks. */
    deadNodeSweep: 2_000,
  },
  /** `proxy.timeout`: ms a backend has to answer. */
  proxy: { timeout: 5_000 },
  /** `demoFeed` (`--demo-symbols`, `--demo-rate`). */
  demoFeed: { symbols: 2000, rate: 1 },
});

/** The least value of a number option, whether it must be whole, and what the error says it is. */
export interface NumberRange {
  min: number;
  integer?: boolean;
  unit?: 'ms' | 'bytes';
}

type PluginNumber = {
  [K in keyof typeof plugin]: (typeof plugin)[K] extends number ? K : never;
}[keyof typeof plugin];

const ms: NumberRange = { min: 0, unit: 'ms' };
const count: NumberRange = { min: 0 };

/**
 * The range of every number option of the plugin (and `maxConnections`, whose default is
 * the machine's); `resolveOptions` refuses a value outside it with `BAYOU_ERR_INVALID_OPTION`
 * and `bayou start` a flag's value with exit 2, both with the words of `expected`.
 */
export const NUMBER_RANGES: Readonly<Record<PluginNumber | 'maxConnections', NumberRange>> = deepFreeze({
  streamMaxBytes: { min: 4096, unit: 'bytes' },
  streamMaxAge: { min: 1000, unit: 'ms' },
  timeout: ms,
  interval: ms,
  maxInterval: ms,
  longPollDelay: ms,
  sweepInterval: { min: 10, unit: 'ms' },
  maxSessionsPerBrowser: count,
  multiSessionInterval: ms,
  maxPayloadBytes: count,
  maxBatchMessages: count,
  compressionThreshold: count,
  maxSubscriptionsPerSession: count,
  maxQueuedMessages: count,
  maxQueuedBytes: count,
  handshakeTimeout: ms,
  heartbeatInterval: ms,
  heartbeatTimeout: ms,
  drainSpread: ms,
  maxHandshakeRate: count,
  maxConnections: count,
  maxConnectionsPerIp: count,
  maxBufferedBytes: count,
  providerLinger: ms,
  providerLease: ms,
  historySize: count,
  historyTtl: ms,
  historyChannels: { min: 1, integer: true },
});

/** What a value of this range must be, as an error says it (`at least 4096 (bytes)`). */
export function expected(range: NumberRange): string {
  if (range.integer) return range.min === 1 ? 'a positive integer' : `an integer of at least ${range.min}`;
  if (range.min === 0) return 'a non-negative number';
  return `at least ${range.min}${range.unit === undefined ? '' : ` (${range.unit})`}`;
}

/** Whether `value` is a number in `range`. */
export function inRange(range: NumberRange, value: unknown): boolean {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= range.min &&
    (!range.integer || Number.isSafeInteger(value))
  );
}
