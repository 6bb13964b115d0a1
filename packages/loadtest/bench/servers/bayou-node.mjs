// @ts-check
// One Bayou node for the cluster bench: `bayou-node.mjs memory` (in-process engine) or
// `bayou-node.mjs redis://host:port <keyPrefix> [auto-pipelining]` (a node of the cluster on
// that Redis; `auto-pipelining` turns on ioredis' own as well) or `bayou-node.mjs
// redis://host:port <keyPrefix> memory-rtt` (the memory engine waiting for one PING to that
// Redis per turn of publishes: rtt-engine.mjs, bench only; `memory-rtt-busy` an EVAL of a
// Lua loop of BAYOU_RTT_BUSY iterations, default 10,000, instead). BAYOU_NODE_BUILD names
// another build's dist/index.js to run instead (before/after comparisons in one sitting).
// Its per-session publish limit is off and its publish API on (key BENCH_API_KEY).
import { announce, BENCH_API_KEY } from './common.mjs';
import { withBrokerRoundTrip } from './rtt-engine.mjs';

/** @type {typeof import('@bayou/server')} */
const { createServer, MemoryEngine, publishApi, tuneRuntime } = await import(
  process.env.BAYOU_NODE_BUILD || '@bayou/server'
);

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
  // One publishing session (the feed shape) sends far more than the default 2,000/s.
  limits: { publishRate: 0 },
  ...(engine === 'memory'
    ? {}
    : variant.startsWith('memory-rtt')
      ? {
          engine: await withBrokerRoundTrip(
            new MemoryEngine(),
            engine,
            variant === 'memory-rtt-busy' ? Number(process.env.BAYOU_RTT_BUSY || 10000) : 0,
          ),
        }
      : { redis: engine, redisEngine }),
});
// The publish API for the backend shape (`--publishers api`), with the key the bench uses.
await server.app.register(publishApi, {
  apiKey: BENCH_API_KEY,
  publish: (channel, data) => server.bayou.publish(channel, data),
});
const base = await server.listen();
announce(`${base}/bayeux`);
