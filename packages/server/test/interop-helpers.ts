/**
 * Shared pieces of the interop suites (real CometD and Faye clients from npm): a server
 * with short timeouts and an echo service, restartable on the same port, plus small
 * waiting helpers. Client libraries are imported by each suite, never here, so the
 * CometD adapter's globals stay in its own file.
 */
import { eventually } from '../../../scripts/eventually.mjs';
import { type BayouServer, type CreateServerOptions, createServer } from '../src/index.js';

export type Transport = 'websocket' | 'long-polling';
export const TRANSPORTS: Transport[] = ['websocket', 'long-polling'];

export interface Running {
  server: BayouServer;
  /** e.g. `http://127.0.0.1:40123` */
  base: string;
  /** The Bayeux endpoint, `${base}/bayeux`. */
  url: string;
  port: number;
}

/** A server on `port` (0 picks one) with `/service/echo` answering with the request's data. */
export async function startBayou(port = 0, options: CreateServerOptions = {}): Promise<Running> {
  const server = await createServer({
    host: '127.0.0.1',
    port,
    logger: false,
    timeout: 2000,
    sweepInterval: 100,
    ...options,
  });
  server.bayou.service('/service/echo', (data) => data);
  const base = await server.listen();
  return { server, base, url: `${base}/bayeux`, port: Number(new URL(base).port) };
}

export { eventually } from '../../../scripts/eventually.mjs';

/** Collects what a listener receives, in order. */
export class Inbox<T = unknown> {
  readonly items: T[] = [];
  readonly push = (item: T): void => {
    this.items.push(item);
  };
  /** Resolves once at least `count` items arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 8000): Promise<T[]> {
    await eventually(() => {
      if (this.items.length < count) throw new Error(`received ${this.items.length} of ${count}`);
    }, timeoutMs);
    return this.items;
  }
}

/** Reads `bayou_connections{transport="…"}` from the server's `/metrics`. */
export async function connectionGauge(base: string, transport: Transport): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = new RegExp(`^bayou_connections\\{transport="${transport}"\\} (\\d+)$`, 'm').exec(text);
  if (match === null) throw new Error(`no bayou_connections{transport="${transport}"} in /metrics`);
  return Number(match[1]);
}

/** Rejects with `what` when `promise` has not settled within `ms`, so a missing reply fails fast. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What the compression interop suites publish: rows past the threshold, then one small message. */
export const COMPRESSIBLE_FEED: Record<string, unknown>[] = [
  ...Array.from({ length: 5 }, (_, n) => ({
    n,
    rows: Array.from({ length: 30 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i + n, ask: 101 + i + n })),
  })),
  { n: 5, small: true },
];

/** Bytes every connection of `server` wrote so far (open ones and closed ones), read by `written()`. */
export function countWritten(server: BayouServer): { written(): number } {
  const sockets: { bytesWritten: number }[] = [];
  server.app.server.on('connection', (socket) => sockets.push(socket));
  return { written: () => sockets.reduce((sum, s) => sum + s.bytesWritten, 0) };
}
