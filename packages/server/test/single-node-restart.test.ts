/**
 * One `bayou start` process restarted (SIGTERM, then started again on its port) while a
 * `@bayou/client` subscriber waits and messages are published meanwhile. With `--redis`
 * the history survives the restart: the client resumes with `recovered: true` and gets
 * every message once, in order, with no gap. With the memory engine the history dies with
 * the process: the client reports the loss with a `gap` event (the documented behaviour).
 */
import { BayouClient, type Message, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BayouServer, createServer } from '../src/index.js';
import { type BayouProcess, startBayou } from './bayou-process.js';
import { disconnectAll, eventually, redisPerFile, requireRedis } from './cluster-helpers.js';
import { freePort } from './programs.js';

requireRedis('single bayou process restarted');

const API_KEY = 'single-node-restart-key';
const redis = redisPerFile();
const processes: BayouProcess[] = [];
const clients: BayouClient[] = [];
let publisher: BayouServer | null = null;

afterEach(async () => {
  await disconnectAll(clients);
  await publisher?.close();
  publisher = null;
  for (const p of processes.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

interface Subscriber {
  client: BayouClient;
  received: number[];
  gaps: { channel: string }[];
  recovered: boolean[];
  handshakes: number;
}

async function subscriber(url: string): Promise<Subscriber> {
  const client = new BayouClient(url, {
    transports: [websocket],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    minReconnectDelay: 50,
    maxReconnectDelay: 300,
  });
  clients.push(client);
  const s: Subscriber = { client, received: [], gaps: [], recovered: [], handshakes: 0 };
  client.on('gap', (gap) => s.gaps.push(gap));
  client.use({
    incoming(message: Message) {
      if (message.channel === '/meta/handshake' && message.successful === true) s.handshakes++;
      const replay = message.ext?.replay;
      if (message.channel === '/meta/subscribe' && typeof replay === 'object' && replay !== null)
        for (const r of Object.values(replay as Record<string, { recovered?: unknown }>))
          if (typeof r?.recovered === 'boolean') s.recovered.push(r.recovered);
      return message;
    },
  });
  const sub = client.subscribe('/numbered', (m) => s.received.push((m.data as { n: number }).n));
  await client.connect();
  await sub.ready;
  return s;
}

/** Publishes `{ n }` for each n of `ns` through the node's HTTP publish API. */
async function publishApi(port: number, ns: number[]): Promise<void> {
  for (const n of ns) {
    const r = await fetch(`http://127.0.0.1:${port}/api/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: '/numbered', data: { n } }),
    });
    expect(r.status).toBe(200);
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('one bayou process restarted', () => {
  it('with --redis: the client resumes from the history in Redis, every message once, no gap', async () => {
    const url = redis().url;
    const prefix = `single-${process.pid}:`;
    const port = await freePort();
    const args = ['--port', String(port), '--redis', url, '--redis-prefix', prefix, '--history-size', '100'];
    processes.push(await startBayou([...args, '--api-key', API_KEY, '--log-level', 'warn']));
    const s = await subscriber(`http://127.0.0.1:${port}/bayeux`);
    await publishApi(port, range(0, 10));
    await eventually(() => expect(s.received).toEqual(range(0, 10)));

    const first = processes[0] as BayouProcess;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Published while the node is down (by a backend on the same Redis): only history has them.
    publisher = await createServer({
      port: 0,
      historySize: 100,
      redis: url,
      redisEngine: { keyPrefix: prefix },
    });
    for (const n of range(10, 20)) await publisher.bayou.publish('/numbered', { n });
    processes[0] = await startBayou([...args, '--api-key', API_KEY, '--log-level', 'warn']);
    await eventually(() => expect(s.received).toEqual(range(0, 20)), 15_000);
    await publishApi(port, range(20, 25));
    await eventually(() => expect(s.received).toEqual(range(0, 25)));
    expect(s.gaps).toEqual([]);
    expect(s.recovered).toContain(true);
    expect(s.recovered).not.toContain(false);
    // The drain handed the session over through Redis and the new process adopted it: no new handshake.
    expect(s.handshakes).toBe(1);
  }, 60_000);

  it('with the memory engine: the history is lost with the process and the client reports the gap', async () => {
    const port = await freePort();
    const args = ['--port', String(port), '--api-key', API_KEY, '--log-level', 'warn'];
    processes.push(await startBayou(args));
    const s = await subscriber(`http://127.0.0.1:${port}/bayeux`);
    await publishApi(port, range(0, 10));
    await eventually(() => expect(s.received).toEqual(range(0, 10)));

    const first = processes[0] as BayouProcess;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    processes[0] = await startBayou(args);
    await eventually(() => expect(s.gaps).toHaveLength(1), 15_000);
    expect(s.gaps[0]?.channel).toBe('/numbered');
    expect(s.recovered).toContain(false);
    // Nothing outlived the process to hand the session over to: the client handshook again.
    expect(s.handshakes).toBe(2);
    // The stream goes on after the gap.
    await publishApi(port, [10]);
    await eventually(() => expect(s.received).toEqual(range(0, 11)));
  }, 60_000);
});
