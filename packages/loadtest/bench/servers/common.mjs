// @ts-check
// Shared by the bench's server processes: report the URL to the parent over IPC and answer
// the memory side channel ({ type: 'memory' } → heap after two forced GCs, and RSS).
import { readFileSync } from 'node:fs';

/**
 * The URL of `server`'s endpoint on 127.0.0.1, once it listens.
 * @param {import('node:net').Server} server
 * @param {string} [path]
 */
export function urlOf(server, path = '/bayeux') {
  const address = server.address();
  if (address === null || typeof address === 'string')
    throw new Error('the bench server is not listening on TCP');
  return `http://127.0.0.1:${address.port}${path}`;
}

/**
 * Tells the parent (over IPC) or the console where the server listens.
 * @param {string} url
 */
export function announce(url) {
  if (process.send) process.send({ type: 'listening', url });
  else console.log(`listening on ${url}`);
}

function rssBytes() {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

/** @typedef {{ type?: string, action?: string, file?: string }} ControlMessage */

/** @param {ControlMessage} m */
function onMemoryAsked(m) {
  if (m?.type !== 'memory') return;
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
  process.send?.({ type: 'memory', heapUsed: process.memoryUsage().heapUsed, rss: rssBytes() });
}
process.on('message', onMemoryAsked);
// The parent going away ends the server, so no orphan keeps a port or a core.
process.on('disconnect', () => process.exit(0));
// A normal exit on SIGTERM/SIGINT lets `node --cpu-prof` write its profile.
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));

// The profile side channel: { type: 'profile', action: 'start' } starts the V8 CPU profiler,
// { type: 'profile', action: 'stop', file } writes what it sampled since to `file` (for
// profiling only a measured window; `node --cpu-prof` covers the whole process life). With
// BAYOU_HEAP_SAMPLE set, `file`.heapprofile also gets what was allocated meanwhile (collected
// objects included).
/** @type {import('node:inspector').Session | null} */
let profiler = null;

/**
 * One inspector call on the profiler session, as a promise.
 * @param {string} method
 * @param {object} [params]
 * @returns {Promise<{ profile?: object }>} the method's result; the two stop methods carry a `profile`
 */
function post(method, params) {
  const session = profiler;
  if (session === null) return Promise.reject(new Error('no profiler session'));
  return new Promise((resolve, reject) =>
    session.post(method, params, (err, result) =>
      err ? reject(err) : resolve(/** @type {{ profile?: object }} */ (result ?? {})),
    ),
  );
}

/** @param {ControlMessage} m */
async function onProfileAsked(m) {
  if (m?.type !== 'profile') return;
  const { Session } = await import('node:inspector');
  if (m.action === 'start') {
    profiler = new Session();
    profiler.connect();
    await post('Profiler.enable');
    await post('Profiler.start');
    if (process.env.BAYOU_HEAP_SAMPLE)
      await post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
  } else if (m.action === 'stop' && profiler !== null && m.file) {
    const { profile } = await post('Profiler.stop');
    const { writeFileSync } = await import('node:fs');
    if (process.env.BAYOU_HEAP_SAMPLE) {
      const heap = await post('HeapProfiler.stopSampling');
      writeFileSync(`${m.file}.heapprofile`, JSON.stringify(heap.profile));
    }
    writeFileSync(m.file, JSON.stringify(profile));
    profiler.disconnect();
    profiler = null;
    process.send?.({ type: 'profiled', file: m.file });
  }
}
process.on('message', onProfileAsked);

/** The publish API key of the bench's Bayou nodes (loopback only, never a secret). */
export const BENCH_API_KEY = 'bench-publish-api-key-0123456789';
