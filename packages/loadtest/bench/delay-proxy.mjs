// @ts-check
// A TCP proxy on loopback that holds every chunk `oneWayMs` in each direction, so a round
// trip through it takes 2 × oneWayMs more: a long link for the bench's latency rows. Chunks
// leave in order; one timer per direction of a connection, not one per chunk.
import { connect, createServer } from 'node:net';

/** @import { Socket } from 'node:net' */

/**
 * One direction of a connection: chunks queued with the time they may leave.
 * @param {Socket} from
 * @param {Socket} to
 * @param {number} oneWayMs
 */
function delayedPipe(from, to, oneWayMs) {
  /** @type {{ at: number, chunk: Buffer }[]} */
  const queue = [];
  /** @type {NodeJS.Timeout | null} */
  let timer = null;
  let ended = false;
  const release = () => {
    timer = null;
    const now = performance.now();
    let head = queue[0];
    for (; head !== undefined && head.at <= now; head = queue[0]) {
      to.write(head.chunk);
      queue.shift();
    }
    if (head !== undefined) timer = setTimeout(release, head.at - now);
    else if (ended) to.end();
  };
  from.on('data', (/** @type {Buffer} */ chunk) => {
    queue.push({ at: performance.now() + oneWayMs, chunk });
    timer ??= setTimeout(release, oneWayMs);
  });
  from.on('end', () => {
    ended = true;
    if (timer === null && queue.length === 0) to.end();
  });
}

/**
 * Listens on 127.0.0.1 (a free port) and forwards to `target` (an http:// or ws:// URL on
 * loopback). Resolves with { url, close() }: `url` is `target` with the proxy's port.
 * @param {string} target
 * @param {number} oneWayMs
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startDelayProxy(target, oneWayMs) {
  const t = new URL(target);
  if (!/^127\./.test(t.hostname))
    throw new Error(`the delay proxy forwards to loopback only, not ${t.hostname}`);
  /** @type {Set<Socket>} */
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = connect({ host: t.hostname, port: Number(t.port) });
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      // A reset on one side ends both: the other side learns it as a peer would.
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    delayedPipe(client, upstream, oneWayMs);
    delayedPipe(upstream, client, oneWayMs);
    client.on('close', () => setTimeout(() => upstream.destroy(), oneWayMs).unref());
    upstream.on('close', () => setTimeout(() => client.destroy(), oneWayMs).unref());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const url = new URL(target);
  url.port = String(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
  return {
    url: url.href,
    close: () =>
      new Promise((/** @type {(value?: undefined) => void} */ resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
