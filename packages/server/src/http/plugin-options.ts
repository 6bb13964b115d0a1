/**
 * The plugin's options as it uses them: resolved once (`resolveOptions`), wrapped with the
 * token, permission and proxy hooks they ask for, and the engine they name (`engine`,
 * `redis`, `redisEngine`, checked here together since they exclude or need each other).
 */
import type { RedisOptions } from 'ioredis';
import { type AuthOptions, createAuthHooks } from '../auth/auth-hooks.js';
import type { Engine } from '../engine/engine.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { RedisEngine } from '../engine/redis/redis-engine.js';
import type { RedisEngineOptions } from '../engine/redis/redis-options.js';
import { BayouEngineError } from '../errors.js';
import type { ServiceHandler } from '../kernel/events.js';
import { optionProblem } from '../option-errors.js';
import { type BayouOptions, defaultOptions, type ResolvedOptions, resolveOptions } from '../options.js';
import { emptyProxyStats, type ProxyStats } from '../proxy/proxy-backend.js';
import { createProxyHooks } from '../proxy/proxy-hooks.js';

export interface BayouPluginOptions extends BayouOptions {
  /** Delivery between nodes. Default: the in-process memory engine (or a Redis engine with `redis`). */
  engine?: Engine;
  /**
   * Join a cluster on this Redis: a `redis://` or `rediss://` (TLS) URL, or ioredis
   * connection options. Builds a `RedisEngine`; not together with `engine`. Default: none.
   */
  redis?: string | RedisOptions;
  /**
   * Further options of the engine that `redis` builds (`keyPrefix`, `heartbeatMs`,
   * `nodeTtlMs`…; see docs/cluster.md). Default: the engine's defaults.
   */
  redisEngine?: Omit<RedisEngineOptions, 'url' | 'redis'>;
}

// Keys Fastify itself may pass along with register() options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);
/** With `auth`, the token and permission hooks wrap the application's own. */
function withAuthHooks(options: ResolvedOptions): {
  options: ResolvedOptions;
  hooks: ReturnType<typeof createAuthHooks> | null;
} {
  if (options.auth === undefined) return { options, hooks: null };
  const input: AuthOptions = { ...options.auth };
  if (options.authenticate !== undefined) input.authenticate = options.authenticate;
  if (options.canSubscribe !== undefined) input.canSubscribe = options.canSubscribe;
  if (options.canPublish !== undefined) input.canPublish = options.canPublish;
  const hooks = createAuthHooks(input);
  const next: Record<string, unknown> = { ...options };
  for (const name of ['authenticate', 'canSubscribe', 'canPublish'] as const) {
    if (hooks[name] === undefined) delete next[name];
    else next[name] = hooks[name];
  }
  return { options: Object.freeze(next) as ResolvedOptions, hooks };
}

/** With `proxy`, the backend's hooks run after those in place (tokens, rules, the app's). */
function withProxyHooks(options: ResolvedOptions): {
  options: ResolvedOptions;
  rpc: ServiceHandler | undefined;
  stats: ProxyStats | undefined;
} {
  if (options.proxy === undefined) return { options, rpc: undefined, stats: undefined };
  const stats = emptyProxyStats();
  const hooks = createProxyHooks(options.proxy, options, stats);
  const next: Record<string, unknown> = { ...options };
  for (const name of ['authenticate', 'canSubscribe', 'canPublish'] as const) {
    if (hooks[name] === undefined) delete next[name];
    else next[name] = hooks[name];
  }
  return { options: Object.freeze(next) as ResolvedOptions, rpc: hooks.rpc, stats };
}

/**
 * The engine the options ask for: `engine`, a Redis engine built from `redis`, or memory;
 * a built engine bounds its history by `history` (the cap, the TTL of an idle channel).
 */
export function engineFrom(
  opts: Pick<BayouPluginOptions, 'engine' | 'redis' | 'redisEngine'>,
  history: Pick<ResolvedOptions, 'historyChannels' | 'historyTtl' | 'sweepInterval'> = defaultOptions,
): Engine {
  const { engine, redis, redisEngine: given } = opts;
  if (engine !== undefined && redis !== undefined)
    optionProblem(
      'options "engine" and "redis" exclude each other: give an engine, or a Redis to build one on',
    );
  if (given !== undefined && redis === undefined)
    optionProblem('option "redisEngine" needs "redis" (the Redis the engine connects to)');
  const declared = (engine as { capabilities?: { multiNode?: unknown } } | undefined)?.capabilities;
  if (engine !== undefined && typeof declared?.multiNode !== 'boolean')
    optionProblem(
      'option "engine" must be an Engine that declares its capabilities ({ multiNode: boolean, backend: string | null }; see the README, The Engine contract)',
    );
  if (redis === undefined)
    return (
      engine ??
      new MemoryEngine({
        historyChannels: history.historyChannels,
        historyTtl: history.historyTtl,
        sweepInterval: history.sweepInterval,
      })
    );
  // An idle channel's epoch goes with its messages unless told otherwise: no key outlives the TTL.
  const redisEngine = {
    epochTtlMs: Math.max(1, history.historyTtl),
    historyChannels: history.historyChannels,
    ...given,
  };
  if (typeof redis === 'string') {
    if (!/^(rediss?|redis\+sentinel):\/\/./.test(redis))
      optionProblem(
        `option "redis" must be a redis://, rediss:// or redis+sentinel:// URL or ioredis options, got "${redis}"`,
      );
    return new RedisEngine({ ...redisEngine, url: redis });
  }
  if (typeof redis !== 'object' || redis === null || Array.isArray(redis))
    optionProblem(
      'option "redis" must be a redis://, rediss:// or redis+sentinel:// URL or an ioredis options object',
    );
  return new RedisEngine({ ...redisEngine, redis });
}

/** Resolves what `app.register(bayou, opts)` was given; throws a `BayouConfigError` naming a bad option. */
export function resolvePluginOptions(opts: BayouPluginOptions): {
  options: ResolvedOptions;
  hooks: ReturnType<typeof createAuthHooks> | null;
  proxied: ReturnType<typeof withProxyHooks>;
  engine: Engine;
} {
  const { engine: given, redis, redisEngine, ...rest } = opts;
  const prefix = (opts as { prefix?: unknown }).prefix;
  if (prefix !== undefined) {
    // fastify-plugin shares the parent's scope, where Fastify ignores `prefix` silently.
    optionProblem(
      `the Bayou plugin does not take Fastify's "prefix" (got ${JSON.stringify(prefix)}): set its "path" option instead, e.g. { path: '/api/bayeux' }, and "metricsPath"/"healthPath" for the other routes`,
    );
  }
  const own = Object.fromEntries(Object.entries(rest).filter(([k]) => !REGISTER_KEYS.has(k)));
  const authed = withAuthHooks(resolveOptions(own));
  const proxied = withProxyHooks(authed.options);
  const engine = engineFrom({ engine: given, redis, redisEngine }, proxied.options);
  return { options: proxied.options, hooks: authed.hooks, proxied, engine };
}

/** Runs `start`; a Redis engine that cannot start is a `BayouEngineError` naming the Redis (without its password). */
export async function startEngine(
  start: () => Promise<void>,
  engine: Engine,
  redis: BayouPluginOptions['redis'],
): Promise<void> {
  try {
    await start();
  } catch (err) {
    const backend = engine.capabilities.backend;
    if (backend === null) throw err;
    const where = typeof redis === 'string' ? redis.replace(/\/\/[^@/]*@/, '//***@') : backend;
    throw new BayouEngineError(`cannot join the cluster on ${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
