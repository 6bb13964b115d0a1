// Shared by the bench's server processes: report the URL to the parent over IPC and answer
// the memory side channel ({ type: 'memory' } → heap after two forced GCs, and RSS).
import { readFileSync } from 'node:fs';

export function announce(url) {
  if (process.send) process.send({ type: 'listening', url });
  else console.log(`listening on ${url}`);
}

function rssBytes() {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

process.on('message', (m) => {
  if (m?.type !== 'memory') return;
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
  process.send({ type: 'memory', heapUsed: process.memoryUsage().heapUsed, rss: rssBytes() });
});
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
let profiler = null;
process.on('message', async (m) => {
  if (m?.type !== 'profile') return;
  const { Session } = await import('node:inspector');
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      profiler.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
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
  } else if (m.action === 'stop' && profiler !== null) {
    const { profile } = await post('Profiler.stop');
    const { writeFileSync } = await import('node:fs');
    if (process.env.BAYOU_HEAP_SAMPLE) {
      const heap = await post('HeapProfiler.stopSampling');
      writeFileSync(`${m.file}.heapprofile`, JSON.stringify(heap.profile));
    }
    writeFileSync(m.file, JSON.stringify(profile));
    profiler.disconnect();
    profiler = null;
    process.send({ type: 'profiled', file: m.file });
  }
});
