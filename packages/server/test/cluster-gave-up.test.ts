/**
 * A client that gives up on a POST before its answer loses nothing (issue #35, found by the
 * Faye EventSource handover test): Faye abandons a connect told `timeout: 0` after 1.2 × its
 * `retry`, and a batch may wait longer than that — for the claim of a session handed over at a
 * drain, for a hook, for the node it is forwarded to. The deliveries its answer would carry
 * must not be written into the closed response (Faye has no acknowledgements: it would never
 * get them again). Two nodes on one real Redis: the batch reaches one, is forwarded to the
 * session's node, and its client goes away there meanwhile; the deliveries go back to the
 * session and the next connect carries them. (A batch run where its client went: event-source.test.)
 */
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type BayouServer, createServer } from '../src/index.js';
import { eventually, redisPerFile, requireRedis } from './cluster-helpers.js';
import { cookieOf, streamingClient } from './stream-client.js';
import { TestClient } from './test-client.js';

requireRedis('a client that gave up on a forwarded batch');

const redis = redisPerFile();
const servers: BayouServer[] = [];
const watchers: TestClient[] = [];
afterEach(async () => {
  for (const w of watchers.splice(0)) await w.close();
  for (const s of servers.splice(0)) await s.close().catch(() => undefined);
});

describe('a client that gives up on a forwarded batch', () => {
  it('gets what its answer carried with its next connect (put back on the session node)', async () => {
    let release = (): void => undefined;
    const held = new Promise<boolean>((resolve) => {
      release = () => resolve(true);
    });
    const start = async () => {
      const server = await createServer({
        host: '127.0.0.1',
        port: 0,
        logger: false,
        timeout: 2000,
        sweepInterval: 50,
        redis: redis().url,
        redisEngine: { keyPrefix: `gave-up-${process.pid}:`, heartbeatMs: 100, nodeTtlMs: 1000 },
        canPublish: (_session, channel) => (channel === '/slow' ? held : true),
      });
      servers.push(server);
      return { server, base: await server.listen() };
    };
    const owner = await start();
    const other = await start();
    const client = await streamingClient(owner.base, 'eventsource');
    await client.subscribe('/q');
    const connect = () =>
      client.request({ channel: '/meta/connect', clientId: client.clientId, connectionType: 'eventsource' });
    expect((await connect()).successful).toBe(true);
    for (let n = 0; n < 3; n++) await owner.server.bayou.publish('/q', { n });
    // Sees the held publish go out, once the batch ran on (and answered) the session's node.
    const watcher = new TestClient(owner.base, 'long-polling');
    watchers.push(watcher);
    await watcher.connect();
    await watcher.subscribe('/slow');
    let answered: ServerResponse | null = null;
    other.server.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.endsWith('?gives-up') === true) answered = res;
    });
    const abandoned = request(new URL(`${other.base}/bayeux?gives-up`), {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...cookieOf(client) },
    });
    abandoned.on('error', () => undefined);
    // A publish whose hook waits on the session's node, then the connect that would carry what waits.
    abandoned.end(
      JSON.stringify([
        { channel: '/slow', clientId: client.clientId, data: 'x' },
        { channel: '/meta/connect', clientId: client.clientId, connectionType: 'eventsource' },
      ]),
    );
    await eventually(() => expect(answered).not.toBeNull());
    abandoned.destroy();
    await eventually(() => expect((answered as ServerResponse | null)?.destroyed).toBe(true));
    release();
    await watcher.waitFor((m) => m.channel === '/slow');
    await eventually(async () => {
      await connect();
      expect(client.deliveries('/q').map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 2]);
    });
  });
});
