/**
 * What `bayou start` says once it listens, beyond the address: the engine (memory, or Redis
 * and where) and the operator's console, each a log line with its fields.
 */
import { REDIS_ENGINE_DEFAULTS } from '../engine/redis/redis-options.js';
import type { BayouConfig } from './define-config.js';

export interface StartupLine {
  msg: string;
  fields: Record<string, unknown>;
}

/** A Redis URL without its password. */
export function redactRedis(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

function redisWhere(redis: BayouConfig['redis']): string {
  if (typeof redis === 'string') return redactRedis(redis);
  return `${redis?.host ?? '127.0.0.1'}:${redis?.port ?? 6379}`;
}

export function engineLine(config: BayouConfig, nodeId: string): StartupLine {
  if (config.engine !== undefined)
    return { msg: 'engine: the config file’s own engine', fields: { engine: 'custom', nodeId } };
  if (config.redis === undefined)
    return {
      msg: 'engine: in-process memory (one node; --redis <url> joins a cluster)',
      fields: { engine: 'memory', nodeId },
    };
  const where = redisWhere(config.redis);
  const prefix = config.redisEngine?.keyPrefix ?? REDIS_ENGINE_DEFAULTS.keyPrefix;
  return {
    msg: `engine: Redis at ${where} (node ${nodeId}, key prefix ${prefix})`,
    fields: { engine: 'redis', redis: where, keyPrefix: prefix, nodeId },
  };
}

/** The console's address, or `null` when it is off. */
export function consoleLine(config: BayouConfig, base: string): StartupLine | null {
  if (config.admin?.enabled !== true) return null;
  const url = `${base}/admin`;
  const how =
    config.admin.password !== undefined
      ? 'sign in with the console password'
      : 'no password set: any password signs in — keep this server on loopback';
  return { msg: `operator's console at ${url} (${how})`, fields: { console: url } };
}
