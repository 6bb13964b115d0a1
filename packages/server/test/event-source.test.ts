/**
 * The `eventsource` connection type as Faye's client speaks it: `GET <path>/<clientId>`
 * with `Accept: text/event-stream` carries `data: [<messages>]` events; the connects go on
 * POSTs and are answered at once. (The real Faye browser client: faye-chromium.test.ts.)
 */
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateServerOptions } from '../src/index.js';
import type { Session } from '../src/session/session.js';
import { keeps } from '../src/transports/resent-connects.js';
import { type Started, startServer } from './start-server.js';
import { cookieOf, openEventSource, type StreamReader, streamingClient } from './stream-client.js';
import { eventually, type TestClient } from './test-client.js';

let s: Started | null = null;
const streams: StreamReader[] = [];
afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await s?.server.close();
  s = null;
});

async function start(options: CreateServerOptions = {}): Promise<Started> {
  s = await startServer(options);
  return s;
}

async function eventSource(client: TestClient): Promise<StreamReader> {
  const reader = await openEventSource((s as Started).base, client.clientId, cookieOf(client));
  streams.push(reader);
  await reader.until(() => reader.lines.length >= 1);
  return reader;
}

const connect = (client: TestClient) =>
  client.request({ channel: '/meta/connect', clientId: client.clientId, connectionType: 'eventsource' });

describe('eventsource', () => {
  it('streams data events, one per flush, after a padding comment and the retry field', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/es');
    const reader = await eventSource(client);
    expect(reader.status).toBe(200);
    expect(reader.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(reader.headers.get('x-accel-buffering')).toBe('no');
    expect(reader.lines[0]).toBe(`:${' '.repeat(2048)}\nretry: 1000`);
    const reply = await connect(client);
    // Faye's EventSource advice: no hold, the next connect after the timeout.
    expect(reply).toMatchObject({
      successful: true,
      advice: { reconnect: 'retry', interval: 2000, timeout: 0 },
    });
    for (let i = 0; i < 3; i++) server.bayou.publish('/es', i);
    await reader.until(() => reader.frames.length === 1);
    expect(reader.frames[0]).toEqual([0, 1, 2].map((data) => ({ channel: '/es', data })));
  });

  it('carries what was queued in the connect reply while no stream is open', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/gap');
    await server.bayou.publish('/gap', 'queued');
    const reply = await connect(client);
    expect(reply.successful).toBe(true);
    expect(client.deliveries('/gap').map((m) => m.data)).toEqual(['queued']);
  });

  it('keeps the session while its stream is open, and ends the stream at a disconnect', async () => {
    const { base, server } = await start({ maxInterval: 300, timeout: 200 });
    const client = await streamingClient(base, 'eventsource');
    const reader = await eventSource(client);
    await reader.until(() => reader.lines.filter((l) => l === ':').length >= 2);
    expect(server.bayou.session(client.clientId)?.transport).toBe('eventsource');
    await client.request({ channel: '/meta/disconnect', clientId: client.clientId });
    await reader.ended;
  });

  it('recycles past streamMaxAge; the reopened stream gets what was queued meanwhile', async () => {
    const { base, server } = await start({ streamMaxAge: 1000 });
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/r');
    const first = await eventSource(client);
    await first.ended;
    await server.bayou.publish('/r', 'meanwhile');
    const second = await eventSource(client);
    expect((await second.waitFor((m) => m.channel === '/r')).data).toBe('meanwhile');
  });

  it('answers an unknown clientId with a 402 event Faye follows (handshake again), then ends', async () => {
    const { base } = await start();
    const reader = await openEventSource(base, 'nobody.here');
    streams.push(reader);
    await reader.ended;
    expect(reader.status).toBe(200);
    expect(reader.frames).toEqual([
      [
        {
          channel: '/meta/connect',
          clientId: 'nobody.here',
          successful: false,
          error: '402::session_unknown',
          advice: { reconnect: 'handshake', interval: 0 },
        },
      ],
    ]);
  });

  it('refuses a GET without Accept: text/event-stream (406) and a foreign page (403)', async () => {
    const { base } = await start();
    const client = await streamingClient(base, 'eventsource');
    const plain = await fetch(`${base}/bayeux/${client.clientId}`);
    expect(plain.status).toBe(406);
    expect(((await plain.json()) as { error: string }).error).toMatch(/Accept: text\/event-stream/);
    const foreign = await fetch(`${base}/bayeux/${client.clientId}`, {
      headers: { accept: 'text/event-stream', origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
  });

  it("does not give a session's stream to another browser when clientIds alone are not trusted", async () => {
    const { base } = await start({ trustClientSession: false });
    const client = await streamingClient(base, 'eventsource');
    const stranger = await openEventSource(base, client.clientId, { cookie: 'BAYEUX_BROWSER=someone-else' });
    streams.push(stranger);
    await stranger.ended;
    expect(stranger.frames[0]?.[0]).toMatchObject({ error: '402::session_unknown' });
    const own = await eventSource(client);
    expect(own.done).toBe(false);
  });

  it('grants a listed origin its page CORS, as long-polling does', async () => {
    const { base } = await start({ allowedOrigins: ['https://app.example'] });
    const client = await streamingClient(base, 'eventsource');
    const reader = await openEventSource(base, client.clientId, {
      origin: 'https://app.example',
      ...cookieOf(client),
    });
    streams.push(reader);
    await reader.until(() => reader.lines.length >= 1);
    expect(reader.status).toBe(200);
    expect(reader.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('ends the older EventSource stream of a session when a newer one opens', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/twice');
    const older = await eventSource(client);
    const newer = await eventSource(client);
    await older.ended;
    await server.bayou.publish('/twice', 'x');
    expect((await newer.waitFor((m) => m.channel === '/twice')).data).toBe('x');
    expect(older.frames).toEqual([]);
  });

  /** A server whose `canPublish` holds publishes to `/slow` until `release()`: a batch that waits. */
  async function startHoldingSlow() {
    let release = (): void => undefined;
    const held = new Promise<boolean>((resolve) => {
      release = () => resolve(true);
    });
    const started = await start({ canPublish: (_s, channel) => (channel === '/slow' ? held : true) });
    return { ...started, release };
  }

  it('keeps what a connect would have carried when its client gave up before the answer (no message lost)', async () => {
    // Faye abandons a connect told `timeout: 0` after 1.2 × its `retry` (0.12 s with retry 0.1),
    // and a batch may wait longer than that (a claim of a handed-over session, a hook). Here a
    // publish ahead of the connect in its batch waits for its hook while the client goes away.
    const { base, server, release } = await startHoldingSlow();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/q');
    expect((await connect(client)).successful).toBe(true);
    for (let n = 0; n < 3; n++) await server.bayou.publish('/q', { n });
    let answered: ServerResponse | null = null;
    server.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.endsWith('?gives-up') === true) answered = res;
    });
    const batch = JSON.stringify([
      { channel: '/slow', clientId: client.clientId, data: 'x' },
      { channel: '/meta/connect', clientId: client.clientId, connectionType: 'eventsource' },
    ]);
    const url = new URL(`${base}/bayeux?gives-up`);
    const abandoned = request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...cookieOf(client) },
    });
    abandoned.on('error', () => undefined);
    abandoned.end(batch);
    await eventually(() => expect(answered).not.toBeNull());
    abandoned.destroy();
    await eventually(() => expect((answered as ServerResponse | null)?.destroyed).toBe(true));
    release();
    // The next connect carries them: they were not written into the closed response.
    await eventually(async () => {
      await connect(client);
      expect(client.deliveries('/q').map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 2]);
    });
  });

  it('sends again what the answer to a connect carried when the same connect comes again (its answer was not read)', async () => {
    // Faye gives up on a connect told `timeout: 0` after 1.2 × its `retry`, and sends the same
    // message again, same id: an answer written as it gave up never reached it.
    const { base, server } = await start();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/again');
    const session = server.bayou.session(client.clientId) as unknown as Session;
    const connectAs = (id: string) =>
      client.request({
        id,
        channel: '/meta/connect',
        clientId: client.clientId,
        connectionType: 'eventsource',
      });
    const got = () => client.deliveries('/again').map((m) => (m.data as { n: number }).n);
    await connectAs('c1');
    for (let n = 0; n < 2; n++) await server.bayou.publish('/again', { n });
    await connectAs('c2');
    expect(got()).toEqual([0, 1]);
    expect(keeps(session)).toBe(true);
    await server.bayou.publish('/again', { n: 2 });
    await connectAs('c2');
    expect(got()).toEqual([0, 1, 0, 1, 2]);
    // Another id: the answer was read, nothing is kept or sent again.
    await connectAs('c3');
    expect(got()).toEqual([0, 1, 0, 1, 2]);
    expect(keeps(session)).toBe(false);
  });

  it('carries nothing in the answer to an attempt of a connect that finishes after the attempt sent again', async () => {
    // The first attempt waits (here for a hook; after a drain, for the claim), its client gives
    // up and sends it again; the second is answered first, with what was queued.
    const { base, server, release } = await startHoldingSlow();
    const client = await streamingClient(base, 'eventsource');
    await client.subscribe('/o');
    const connect = { channel: '/meta/connect', clientId: client.clientId, connectionType: 'eventsource' };
    await client.request({ ...connect, id: 'k0' });
    for (let n = 0; n < 2; n++) await server.bayou.publish('/o', { n });
    let arrived = false;
    server.app.server.on('request', (req: IncomingMessage) => {
      if (req.url?.endsWith('?first') === true) arrived = true;
    });
    const first = new Promise<string>((resolve, reject) => {
      const req = request(new URL(`${base}/bayeux?first`), {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...cookieOf(client) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end(
        JSON.stringify([
          { channel: '/slow', clientId: client.clientId, data: 'x' },
          { ...connect, id: 'k1' },
        ]),
      );
    });
    await eventually(() => expect(arrived).toBe(true));
    await client.request({ ...connect, id: 'k1' });
    expect(client.deliveries('/o').map((m) => (m.data as { n: number }).n)).toEqual([0, 1]);
    release();
    const late = JSON.parse(await first) as { channel: string }[];
    expect(late.filter((m) => m.channel === '/o')).toEqual([]);
    // The late one did not take the place of the second's answer: sent a third time, it carries them again.
    await client.request({ ...connect, id: 'k1' });
    expect(client.deliveries('/o').map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 0, 1]);
    await client.request({ ...connect, id: 'k2' });
    expect(client.deliveries('/o').map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 0, 1]);
  });
});
