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
