// @ts-check
// One Bayou node for the cluster bench: `bayou-node.mjs memory` (in-process engine) or
// `bayou-node.mjs redis://host:port <keyPrefix> [auto-pipelining]` (a node of the cluster on
// that Redis; `auto-pipelining` turns on ioredis' own as well). BAYOU_NODE_BUILD names
// another build's dist/index.js to run instead (before/after comparisons in one sitting).
import { announce } from './common.mjs';

/** @type {typeof import('@bayou/server')} */
const { createServer, tuneRuntime } = await import(process.env.BAYOU_NODE_BUILD || '@bayou/server');

// As `bayou start` does for its own process (the V8 settings of runtime-tuning.ts).
tuneRuntime?.();

const [engine = 'memory', keyPrefix = 'bench:', variant = ''] = process.argv.slice(2);
const redisEngine = {
  keyPrefix: keyPrefix || 'bench:',
  ...(variant === 'auto-pipelining' ? { redis: { enableAutoPipelining: true } } : {}),
};
const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  path: '/bayeux',
  timeout: 30000,
  logger: false,
  ...(engine === 'memory' ? {} : { redis: engine, redisEngine }),
});
const base = await server.listen();
announce(`${base}/bayeux`);
