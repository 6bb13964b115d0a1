// One Bayou node for the cluster bench: `bayou-node.mjs memory` (in-process engine) or
// `bayou-node.mjs redis://host:port <keyPrefix>` (a node of the cluster on that Redis).
import { createServer, tuneRuntime } from '@bayou/server';
import { announce } from './common.mjs';

// As `bayou start` does for its own process (the V8 settings of runtime-tuning.ts).
tuneRuntime();

const [engine = 'memory', keyPrefix = 'bench:'] = process.argv.slice(2);
const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  path: '/bayeux',
  timeout: 30000,
  logger: false,
  ...(engine === 'memory' ? {} : { redis: engine, redisEngine: { keyPrefix } }),
});
const base = await server.listen();
announce(`${base}/bayeux`);
