/**
 * The chat scenario's publisher shapes (`--publishers`) and the checks that go with them.
 * `clients`: a random client for each message (many sessions); `session`: one extra
 * session per worker sending each batch of `batchSize` publishes in one WebSocket frame (a
 * market-data feed); `api`: a backend sending each batch as one `POST /api/publish` of a
 * Bayou server (needs `apiKey`).
 */
import { LoadtestError, LoadtestErrors } from './errors.js';

export type PublisherShape = 'clients' | 'session' | 'api';
export const PUBLISHER_SHAPES: readonly PublisherShape[] = ['clients', 'session', 'api'];

/** Their rows of the option table (`OPTION_SPECS`). */
export const PUBLISHER_SPECS = [
  {
    key: 'publishers',
    kind: 'choice',
    choices: PUBLISHER_SHAPES,
    help:
      'clients: a random client per message | session: one session per worker, each batch of --batch-size ' +
      'publishes in one WebSocket frame (a feed) | api: each batch one POST /api/publish (needs --api-key)',
    scenarios: ['chat'],
  },
  {
    key: 'apiKey',
    kind: 'string',
    help: "the server's publish API key, for --publishers api",
    scenarios: ['chat'],
  },
] as const;

/** Throws a LoadtestError naming the fix when the shape cannot run with these options. */
export function checkPublishers(o: { publishers: PublisherShape; apiKey: string; transport: string }): void {
  if (!PUBLISHER_SHAPES.includes(o.publishers)) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `publishers is ${PUBLISHER_SHAPES.join(', ')}`);
  }
  if (o.publishers === 'api' && o.apiKey === '') {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      "--publishers api needs --api-key (the server's BAYOU_API_KEY)",
    );
  }
  if (o.publishers === 'session' && o.transport !== 'websocket') {
    throw new LoadtestError(
      LoadtestErrors.INVALID_OPTION,
      '--publishers session sends its batches as WebSocket frames: add --transport websocket',
    );
  }
}
