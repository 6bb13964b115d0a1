export type { RedisEngineStats } from './redis-engine.js';
export { RedisEngine } from './redis-engine.js';
export type { RedisEngineOptions } from './redis-options.js';
