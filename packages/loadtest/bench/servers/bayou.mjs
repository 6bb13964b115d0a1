// @ts-check
// Bayou (@bayou/server) with both transports, no logger. With the argument `baseline` it
// loads another build instead, for before/after comparisons in one sitting:
// BAYOU_BASELINE=/path/to/packages/server/dist/index.js pnpm bench --servers bayou,bayou-baseline
// BENCH_PORT fixes the port (the storm bench's restart mode starts it again on the same one).
import { announce } from './common.mjs';

const baseline = process.argv[2] === 'baseline';
if (baseline && !process.env.BAYOU_BASELINE) {
  console.error(
    'bayou-baseline: set BAYOU_BASELINE to the dist/index.js of the @bayou/server build to compare',
  );
  process.exit(2);
}
/** @type {typeof import('@bayou/server')} */
const { createServer, tuneRuntime } = await import(
  (baseline ? process.env.BAYOU_BASELINE : undefined) ?? '@bayou/server'
);
// As `bayou start` does for its own process (the V8 settings of runtime-tuning.ts); an
// older baseline build may have none.
tuneRuntime?.();

const server = await createServer({
  host: '127.0.0.1',
  port: Number(process.env.BENCH_PORT ?? 0),
  path: '/bayeux',
  // BENCH_TRANSPORTS: the streaming bench offers every transport (a comma list).
  transports: /** @type {import('@bayou/server').CreateServerOptions['transports']} */ (
    process.env.BENCH_TRANSPORTS?.split(',') ?? ['websocket', 'long-polling']
  ),
  // BENCH_TIMEOUT: the idle bench holds connects for its --period (ms).
  timeout: Number(process.env.BENCH_TIMEOUT ?? 30000),
  // BENCH_HEARTBEAT_INTERVAL: and pings heartbeat sessions that often (a build without the
  // heartbeat is never given the option).
  ...(process.env.BENCH_HEARTBEAT_INTERVAL
    ? { heartbeatInterval: Number(process.env.BENCH_HEARTBEAT_INTERVAL) }
    : {}),
  logger: false,
});
const base = await server.listen();
announce(`${base}/bayeux`);
