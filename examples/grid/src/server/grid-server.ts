/** The grid demo's composition root: `@bayou/server` with its demo price feed, and the page, on one Fastify app. */
import { fileURLToPath } from 'node:url';
import { type BayouOptions, type BayouServer, createServer, demoSubject } from '@bayou/server';
import { serveStatic } from './static-files.js';

export interface GridServerOptions {
  /** Interface to listen on. Default `'127.0.0.1'`: an open server, this machine only. */
  host?: string;
  /** Port; `0` picks a free one. Default `8080`. */
  port?: number;
  /** Folder of the built page. Default: `public/` beside the built server (`dist/public`). */
  publicDir?: string;
  /** Symbols the demo feed knows (`AAA`, `AAB`, …), at most 17,576. Default `10000`. */
  symbols?: number;
  /** Updates per second of each watched symbol. Default `1`. */
  rate?: number;
  /** Other Bayou options. */
  bayou?: BayouOptions;
}

export async function createGridServer(options: GridServerOptions = {}): Promise<BayouServer> {
  const server = await createServer({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 8080,
    // Room for a page that subscribes to every row (`?visibleOnly=0`, the comparison):
    // 10,000 subscriptions, which the client sends in one batch after a reconnect.
    maxSubscriptionsPerSession: 20_000,
    maxBatchMessages: 20_000,
    maxPayloadBytes: 8 * 1024 * 1024,
    // Its 10,000 snapshots, then 10,000 updates a second, are numbered frames the page
    // acknowledges about once a second: more than the default 10,000 are unacknowledged at
    // times, and the page was dropped as a slow consumer (and resubscribed) in a loop.
    maxQueuedMessages: 50_000,
    // What pays here (bench/grid-bytes.mjs): permessage-deflate takes the 10,000 snapshots to
    // 0.40x their bytes and the updates, many to a frame, to 0.20x. Deltas on plain channels
    // do not apply: rows are records, which already send only the fields that changed.
    compression: true,
    ...options.bayou,
    demoFeed: { symbols: options.symbols ?? 10_000, rate: options.rate ?? 1 },
  });
  serveStatic(server.app, options.publicDir ?? fileURLToPath(new URL('./public/', import.meta.url)));
  server.app.get('/favicon.ico', (_request, reply) => {
    reply.code(204).send();
  });
  return server;
}

/** Record subjects this server's subscribers hold now, e.g. the rows a page has live. */
export function liveSubjects(server: BayouServer, symbols: readonly string[]): string[] {
  return symbols.map(demoSubject).filter((subject) => server.bayou.subscriberCount(subject) > 0);
}
