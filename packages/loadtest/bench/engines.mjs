// @ts-check
// The engines part of the cluster bench (`node bench/cluster.mjs --only engines`): one Bayou
// node with the memory engine against the same node with the Redis engine on a fresh local
// redis-server, in one sitting, rounds interleaved, WebSocket chat (lean generator), at
// saturation (closed loop) and at a fixed delivered rate, for each publisher shape
// (`--shapes`): `clients` (a random subscriber publishes each message: many sessions),
// `session` (one extra session sends each batch of 10 publishes in one WebSocket frame: a
// market-data feed) and `api` (a backend sends each batch of 10 as one POST /api/publish). Per run: delivered msg/s, node
// CPU per delivered message, messages per WebSocket frame, p50/p99; for Redis also its CPU,
// commands, bytes and socket reads/writes per publication (from /proc and INFO deltas over
// the measured window). Variants: `redis-ap` (ioredis auto-pipelining added),
// `redis-baseline` (the Redis engine of another build, BAYOU_BASELINE=…/dist/index.js) and
// `memory-rtt` (the memory engine waiting for one PING to the same redis-server per turn of
// publishes, servers/rtt-engine.mjs: a broker that does no work, the floor of waiting;
// `memory-rtt-busy` the same with a Lua loop run per round trip, a broker that burns CPU).
import { runScenario } from '../dist/index.js';
import { median, spread } from '../dist/stats.js';
import { redisCommand, startNodes } from './cluster-processes.mjs';
import { cpuSeconds, cpuSplit } from './lib.mjs';
import { BENCH_API_KEY } from './servers/common.mjs';

/** @import { LoadtestOptions } from '../dist/index.js' */
/** @import { BenchRedis, ForkedScript } from './cluster-processes.mjs' */

/**
 * The cluster bench's flags this part reads.
 * @typedef {{ engines: string, shapes: string, rounds: number, clients: number, rooms: number, roomsPerClient: number, outstanding: number, measure: number, enginesWarmup: number, enginesRate: number }} EnginesFlags
 */
/** @typedef {Awaited<ReturnType<typeof redisCounters>>} RedisCounters */
/** One run's figures (Redis ones only on the Redis engine). @typedef {Record<string, number>} EngineFigures */
/** @typedef {{ variant: string, shape: string, sat: EngineFigures, rate: EngineFigures }} EngineRun */

export const ENGINE_VARIANTS = [
  'memory',
  'memory-rtt',
  'memory-rtt-busy',
  'redis',
  'redis-ap',
  'redis-baseline',
];
/** Whether `variant` runs the Redis engine (whose Redis counters are measured). */
const onRedisEngine = (/** @type {string} */ variant) => variant.startsWith('redis');
/** Publisher shapes (the load tester's `--publishers`), in the order the tables show them. */
export const SHAPES = ['session', 'clients', 'api'];
/** @type {Record<string, string>} */
const SHAPE_NAMES = {
  session: '(a) one publishing session, bursts of 10 publishes per WebSocket frame',
  clients: '(b) many publishing sessions (chat: a random subscriber publishes each message)',
  api: '(c) a backend, batches of 10 per POST /api/publish (pipelined)',
};

/**
 * Redis counters that grow: commands, script runs (one per publication), bytes, socket events.
 * @param {number} port
 */
async function redisCounters(port) {
  const [stats, commands] = await Promise.all([
    redisCommand(port, 'INFO stats'),
    redisCommand(port, 'INFO commandstats'),
  ]);
  /** @param {string} name */
  const stat = (name) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1] ?? 0);
  let calls = 0;
  let scripts = 0;
  for (const m of commands.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
    calls += Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += Number(m[2]);
  }
  return {
    calls,
    scripts,
    bytesIn: stat('total_net_input_bytes'),
    bytesOut: stat('total_net_output_bytes'),
    reads: stat('total_reads_processed'),
    writes: stat('total_writes_processed'),
  };
}

/**
 * One measured chat run against `node`; Redis counters when `redis` is given, per
 * publication: per script run on the Redis engine (`byScripts`), else per delivered
 * message over the fan-out (memory-rtt, whose round trips are per turn).
 * @param {ForkedScript} node
 * @param {BenchRedis | null} redis
 * @param {Partial<LoadtestOptions>} options
 * @param {boolean} byScripts
 * @returns {Promise<EngineFigures>}
 */
async function chat(node, redis, options, byScripts) {
  /** @type {Partial<Record<'open' | 'close', { node: number, split: { user: number, system: number }, redis: number, counters: Promise<RedisCounters> | null }>>} */
  const marks = {};
  /** @param {'open' | 'close'} event */
  const mark = (event) => {
    marks[event] = {
      node: cpuSeconds(node.pid),
      split: cpuSplit(node.pid),
      redis: redis?.pid ? cpuSeconds(redis.pid) : 0,
      counters: redis ? redisCounters(redis.port) : null,
    };
  };
  const r = await runScenario('chat', options, { protocol: 'bayeux', onWindow: mark });
  const { open, close } = marks;
  if (!open || !close) throw new Error('the measured window never opened and closed');
  const delivered = Math.max(1, r.deliveredInWindow);
  /** @type {EngineFigures} */
  const out = {
    delivered: r.deliveredPerSecond,
    nodeUs: ((close.node - open.node) * 1e6) / delivered,
    // Where the node's CPU goes: its own code (user) or the kernel (system: socket calls).
    userUs: ((close.split.user - open.split.user) * 1e6) / delivered,
    systemUs: ((close.split.system - open.split.system) * 1e6) / delivered,
    perFrame: r.deliveriesPerFrame,
    p50: r.latency.p50,
    p99: r.latency.p99,
    lost: (r.messages.lost ?? 0) + (r.messages.duplicated ?? 0) + r.sessions.failed,
  };
  if (redis && open.counters && close.counters) {
    const [a, b] = await Promise.all([open.counters, close.counters]);
    // Each publication is one script run; the nodes' heartbeats (one a second) are noise here.
    const fanOut = ((options.clients ?? 1) * (options.roomsPerClient ?? 1)) / (options.rooms ?? 1);
    const pubs = Math.max(1, byScripts ? b.scripts - a.scripts : r.deliveredInWindow / fanOut);
    Object.assign(out, {
      redisUsPerPub: ((close.redis - open.redis) * 1e6) / pubs,
      commandsPerPub: (b.calls - a.calls) / pubs,
      bytesInPerPub: (b.bytesIn - a.bytesIn) / pubs,
      bytesOutPerPub: (b.bytesOut - a.bytesOut) / pubs,
      readsPerPub: (b.reads - a.reads) / pubs,
      writesPerPub: (b.writes - a.writes) / pubs,
    });
  }
  return out;
}

/**
 * Saturation then the fixed rate, on one node of `variant` (a fresh key prefix each time),
 * published in `shape`.
 * @param {string} variant
 * @param {string} shape
 * @param {BenchRedis} redis
 * @param {EnginesFlags} flags
 * @returns {Promise<EngineRun>}
 */
async function engineRun(variant, shape, redis, flags) {
  const onRedis = onRedisEngine(variant);
  const brokered = variant === 'memory' ? null : redis;
  const env = variant === 'redis-baseline' ? { BAYOU_NODE_BUILD: process.env.BAYOU_BASELINE } : {};
  const [node] = await startNodes(1, brokered, {
    env,
    args: variant === 'redis-ap' ? ['auto-pipelining'] : variant.startsWith('memory-rtt') ? [variant] : [],
  });
  if (node === undefined) throw new Error(`no ${variant} node started`);
  try {
    /** @type {Partial<LoadtestOptions>} */
    const base = {
      url: node.url,
      transport: 'websocket',
      clients: flags.clients,
      rooms: flags.rooms,
      roomsPerClient: flags.roomsPerClient,
      messageSize: 50,
      batchSize: 10,
      drain: 5000,
      metricsUrl: 'off',
      localAddresses: [],
      publishers: /** @type {'clients' | 'session' | 'api'} */ (shape),
      apiKey: shape === 'api' ? BENCH_API_KEY : '',
    };
    const fanOut = (flags.clients * flags.roomsPerClient) / flags.rooms;
    const sat = await chat(
      node,
      brokered,
      { ...base, maxOutstanding: flags.outstanding, duration: flags.measure, warmup: flags.enginesWarmup },
      onRedis,
    );
    const rate = await chat(
      node,
      brokered,
      { ...base, rate: flags.enginesRate / fanOut, duration: flags.measure, warmup: 1000 },
      onRedis,
    );
    return { variant, shape, sat, rate };
  } finally {
    await node.stop();
  }
}

/**
 * Runs every variant `flags.rounds` times, interleaved; returns the runs per variant.
 * @param {BenchRedis} redis
 * @param {EnginesFlags} flags
 * @param {(text: string) => void} log
 * @returns {Promise<Record<string, EngineRun[]>>}
 */
export async function measureEngines(redis, flags, log) {
  const variants = flags.engines.split(',').filter((v) => ENGINE_VARIANTS.includes(v));
  if (variants.includes('redis-baseline') && !process.env.BAYOU_BASELINE) {
    throw new Error(
      '--engines redis-baseline needs BAYOU_BASELINE=<other build>/packages/server/dist/index.js',
    );
  }
  const shapes = flags.shapes.split(',').filter((v) => SHAPES.includes(v));
  /** @type {Record<string, EngineRun[]>} runs by `<shape>/<variant>` */
  const runs = {};
  for (let round = 0; round < flags.rounds; round++) {
    const order = variants.map((_, i) => /** @type {string} */ (variants[(i + round) % variants.length]));
    for (const shape of shapes) {
      for (const variant of order) {
        const r = await engineRun(variant, shape, redis, flags);
        log(
          `  engines ${shape} ${variant}: ${JSON.stringify(r, (_, v) => (typeof v === 'number' ? +v.toFixed(2) : v))}`,
        );
        const key = `${shape}/${variant}`;
        runs[key] = [...(runs[key] ?? []), r];
      }
    }
  }
  return runs;
}

/**
 * @param {number} x
 * @param {number} [d]
 */
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');

/**
 * The markdown of the engines part: one table, then the Redis/memory ratios against their targets.
 * @param {Record<string, EngineRun[]>} runs
 * @param {EnginesFlags} flags
 */
export function enginesTable(runs, flags) {
  /**
   * @param {EngineRun[]} list
   * @param {'sat' | 'rate'} load
   * @param {string} key
   */
  const med = (list, load, key) => median(list.map((r) => r[load][key] ?? Number.NaN));
  /**
   * @param {EngineRun[]} list
   * @param {'sat' | 'rate'} load
   * @param {string} key
   */
  const sp = (list, load, key) => spread(list.map((r) => r[load][key] ?? Number.NaN));
  const fanOut = (flags.clients * flags.roomsPerClient) / flags.rooms;
  const out = [
    `**Memory against Redis engine, one node, three publisher shapes**: ${flags.clients} WebSocket subscribers (lean generator, \`bayou-loadtest\` chat scenario), ${flags.rooms} rooms × ${flags.roomsPerClient} per client (fan-out ${fanOut}), 50-byte messages, each message to a random room; saturation = closed loop with ${flags.outstanding} deliveries outstanding, fixed = ${flags.enginesRate} delivered msg/s; medians of ${flags.rounds} interleaved rounds, a fresh node per run, Redis on a fresh local redis-server; the generator shares the machine's cores with the node and Redis.`,
    '',
    '| shape | engine | load | delivered msg/s | node CPU µs per delivered msg | of which user / system | msgs per frame | p50 ms | p99 ms | redis-server CPU µs per publication | Redis commands per publication | Redis reads / writes per publication | lost |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const shapes = SHAPES.filter((shape) => Object.keys(runs).some((k) => k.startsWith(`${shape}/`)));
  for (const shape of shapes) {
    for (const [key, list] of Object.entries(runs)) {
      if (!key.startsWith(`${shape}/`)) continue;
      const variant = key.slice(shape.length + 1);
      for (const load of /** @type {const} */ (['sat', 'rate'])) {
        const redis = variant !== 'memory';
        /**
         * @param {string} k
         * @param {number} d
         */
        const rd = (k, d) => (redis ? f(med(list, load, k), d) : '–');
        out.push(
          `| ${shape} | ${variant} | ${load === 'sat' ? 'saturation' : `${flags.enginesRate} msg/s`} | ${Math.round(med(list, load, 'delivered'))} | ${f(med(list, load, 'nodeUs'), 2)} (±${f(sp(list, load, 'nodeUs'), 0)}%) | ${f(med(list, load, 'userUs'), 2)} / ${f(med(list, load, 'systemUs'), 2)} | ${f(med(list, load, 'perFrame'), 2)} | ${f(med(list, load, 'p50'), 1)} | ${f(med(list, load, 'p99'), 1)} | ${rd('redisUsPerPub', 1)} | ${rd('commandsPerPub', 1)} | ${redis ? `${f(med(list, load, 'readsPerPub'), 2)} / ${f(med(list, load, 'writesPerPub'), 2)}` : '–'} | ${list.reduce((a, r) => a + (r.sat.lost ?? 0) + (r.rate.lost ?? 0), 0)} |`,
        );
      }
    }
  }
  out.push('');
  for (const shape of shapes) {
    const memory = runs[`${shape}/memory`];
    const redis = runs[`${shape}/redis`];
    if (!memory || !redis) continue;
    /**
     * @param {'sat' | 'rate'} load
     * @param {string} key
     */
    const ratio = (load, key) => med(redis, load, key) / med(memory, load, key);
    /**
     * @param {number} value
     * @param {boolean} ok
     */
    const check = (value, ok) => `${f(value, 2)}× (${ok ? 'met' : 'missed'})`;
    const parts = [];
    for (const [load, name] of /** @type {const} */ ([
      ['sat', 'saturation'],
      ['rate', `${flags.enginesRate} msg/s`],
    ])) {
      const cpu = ratio(load, 'nodeUs');
      const frames = ratio(load, 'perFrame');
      parts.push(
        `at ${name} CPU per message **${check(cpu, cpu <= 1.15)}**, messages per frame ${check(frames, frames >= 0.9)}`,
      );
    }
    out.push(`- ${SHAPE_NAMES[shape]}, Redis / memory: ${parts.join('; ')} (targets ≤ 1.15×, ≥ 0.9×).`);
  }
  out.push(...floorLines(runs, flags, shapes));
  return out;
}

/**
 * With `memory-rtt` in the sitting: node CPU per delivered message of memory-rtt / memory
 * (the floor of waiting for a broker) and redis / memory-rtt (what the Redis engine adds
 * above it), as ratios of medians and as the median of the ratios paired by round.
 * @param {Record<string, EngineRun[]>} runs
 * @param {EnginesFlags} flags
 * @param {string[]} shapes
 */
function floorLines(runs, flags, shapes) {
  /**
   * @param {EngineRun[]} a
   * @param {EngineRun[]} b
   * @param {'sat' | 'rate'} load
   */
  const ratios = (a, b, load) => {
    const of = (/** @type {EngineRun[]} */ list) => median(list.map((r) => r[load].nodeUs ?? Number.NaN));
    const paired = median(
      a.map((r, i) => (r[load].nodeUs ?? Number.NaN) / (b[i]?.[load].nodeUs ?? Number.NaN)),
    );
    return `${f(of(a) / of(b), 2)}× (paired ${f(paired, 2)}×)`;
  };
  const out = [];
  for (const shape of shapes) {
    const memory = runs[`${shape}/memory`];
    const rtt = runs[`${shape}/memory-rtt`];
    const redis = runs[`${shape}/redis`];
    if (!memory || !rtt) continue;
    const parts = [];
    for (const [load, name] of /** @type {const} */ ([
      ['sat', 'saturation'],
      ['rate', `${flags.enginesRate} msg/s`],
    ])) {
      const more = redis ? `, redis / memory-rtt ${ratios(redis, rtt, load)}` : '';
      parts.push(`at ${name} memory-rtt / memory ${ratios(rtt, memory, load)}${more}`);
    }
    out.push(`- ${SHAPE_NAMES[shape]}, node CPU per message: ${parts.join('; ')}.`);
  }
  return out;
}
