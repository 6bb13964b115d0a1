/**
 * A client that never loops (issue #35 item 3): against a server that keeps failing on one
 * path — on every transport — each client's attempts stay within what its one backoff
 * allows, and a server's advice (a Bayeux `interval`, an HTTP `Retry-After`) stretches it.
 *
 * Each client gets its own small loopback server (node:http + ws, or a raw TCP server) that
 * accepts what a session needs to get going and then fails it in one way, once per cycle,
 * noting when it inflicted each failure: the client's attempts. With `minReconnectDelay`
 * 100 ms no two attempts of a client may come closer than 100 ms (or the advised wait);
 * skipping the backoff on a path makes that path's attempts come milliseconds apart, and
 * climb into the hundreds within the window (fewer on a loaded machine, hence the gaps).
 */
import http from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import net from 'node:net';
import { META_CONNECT, META_HANDSHAKE } from '@bayou/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  BayouClient,
  longPolling,
  type Message,
  streaming,
  type TransportFactory,
  type WebSocketConstructor,
  websocket,
} from '../src/index.js';

const WINDOW = 1500;
const MIN = 100;
const CLIENTS = 3;

/** How a fixture fails a session that got going. */
type Failure =
  | 'ws-cut'
  | 'stream-error'
  | 'stream-end'
  | 'connect-402'
  | 'connect-500'
  | 'handshake-503-advice'
  | 'http-503-retry-after';

interface Fixture {
  readonly url: string;
  /** When each failure was inflicted: one per attempt of the client. */
  readonly failures: number[];
  close(): Promise<void>;
}

const open: Fixture[] = [];
afterAll(async () => {
  await Promise.all(open.map((f) => f.close()));
});

let sessions = 0;

/** Answers a handshake or a connect: the first connect after a failure succeeds, the next fails. */
function bayeux(failure: Failure, state: { armed: boolean; fixture: Fixture }, m: Message): Message | 'fail' {
  if (m.channel === META_HANDSHAKE) {
    if (failure === 'handshake-503-advice') {
      state.fixture.failures.push(Date.now());
      const advice = { reconnect: 'handshake', interval: 300 } as const;
      return { channel: META_HANDSHAKE, id: m.id, successful: false, error: '503::busy', advice };
    }
    if (failure === 'http-503-retry-after') return 'fail';
    const types = ['websocket', 'streaming', 'long-polling'];
    const advice = { reconnect: 'retry', interval: 0, timeout: 30000 } as const;
    const clientId = `c${++sessions}`;
    return {
      channel: META_HANDSHAKE,
      id: m.id,
      successful: true,
      clientId,
      version: '1.0',
      supportedConnectionTypes: types,
      advice,
    };
  }
  if (m.channel === META_CONNECT) {
    if (!state.armed) {
      state.armed = true;
      return {
        channel: META_CONNECT,
        id: m.id,
        clientId: m.clientId,
        successful: true,
        advice: { interval: 0 },
      };
    }
    state.armed = false;
    state.fixture.failures.push(Date.now());
    if (failure === 'connect-402') {
      const advice = { reconnect: 'handshake', interval: 0 } as const;
      return { channel: META_CONNECT, id: m.id, successful: false, error: '402::unknown client', advice };
    }
    return 'fail';
  }
  return { channel: m.channel, id: m.id, successful: true };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/bayeux`;
}

/** A Bayeux-speaking fixture failing sessions with `failure`. */
async function bayeuxFixture(failure: Failure): Promise<Fixture> {
  const sockets = new Set<Socket>();
  const server = http.createServer();
  const fixture: Fixture = { url: '', failures: [], close: async () => {} };
  const state = { armed: false, fixture };
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('request', (req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const messages = JSON.parse(body) as Message[];
      const replies = messages.map((m) => bayeux(failure, state, m));
      if (failure === 'http-503-retry-after') {
        fixture.failures.push(Date.now());
        res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' });
        return res.end('{"error":"busy"}');
      }
      if (replies.includes('fail')) {
        if (failure === 'connect-500') return res.writeHead(500).end('{"error":"boom"}');
        return res.destroy();
      }
      const text = JSON.stringify(replies);
      if (req.url?.startsWith('/bayeux/stream')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(`\n${text}\n`);
        // The stream got going; then it fails, once per cycle.
        fixture.failures.push(Date.now());
        setTimeout(() => (failure === 'stream-end' ? res.end() : res.destroy()), 5);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const replies = (JSON.parse(String(data)) as Message[]).map((m) => bayeux(failure, state, m));
      if (replies.includes('fail')) ws.terminate();
      else ws.send(JSON.stringify(replies));
    });
  });
  fixture.close = async () => {
    for (const c of wss.clients) c.terminate();
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  (fixture as { url: string }).url = await listen(server);
  return fixture;
}

/** A raw TCP fixture: resets every connection (`reset`) or holds it silent (`blackhole`). */
async function tcpFixture(kind: 'reset' | 'blackhole'): Promise<Fixture> {
  const sockets = new Set<Socket>();
  const fixture: Fixture = { url: '', failures: [], close: async () => {} };
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.once('data', (chunk) => {
      // One count per attempt: the WebSocket upgrade or the handshake (not the origin check).
      const text = String(chunk);
      if (/upgrade: websocket/i.test(text) || text.includes(META_HANDSHAKE))
        fixture.failures.push(Date.now());
      if (kind === 'reset') s.resetAndDestroy();
    });
  });
  fixture.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  (fixture as { url: string }).url = await listen(server);
  return fixture;
}

interface Path {
  readonly name: string;
  readonly transports: TransportFactory[];
  readonly fixture: () => Promise<Fixture>;
  /** The smallest wait between two attempts the client must keep (backoff or advice). */
  readonly spacing: number;
}

const paths: Path[] = [
  {
    name: 'WebSocket refused (reset)',
    transports: [websocket],
    fixture: () => tcpFixture('reset'),
    spacing: MIN,
  },
  { name: 'WebSocket cut', transports: [websocket], fixture: () => bayeuxFixture('ws-cut'), spacing: MIN },
  {
    name: 'WebSocket 402 on connect',
    transports: [websocket],
    fixture: () => bayeuxFixture('connect-402'),
    spacing: MIN,
  },
  {
    name: 'stream error',
    transports: [streaming],
    fixture: () => bayeuxFixture('stream-error'),
    spacing: MIN,
  },
  {
    name: 'stream early end',
    transports: [streaming],
    fixture: () => bayeuxFixture('stream-end'),
    spacing: MIN,
  },
  {
    name: 'long-poll 402 on connect',
    transports: [longPolling],
    fixture: () => bayeuxFixture('connect-402'),
    spacing: MIN,
  },
  {
    name: 'long-poll 5xx on connect',
    transports: [longPolling],
    fixture: () => bayeuxFixture('connect-500'),
    spacing: MIN,
  },
  {
    name: 'long-poll cut (network error)',
    transports: [longPolling],
    fixture: () => bayeuxFixture('ws-cut'),
    spacing: MIN,
  },
  {
    name: 'long-poll reset before any answer',
    transports: [longPolling],
    fixture: () => tcpFixture('reset'),
    spacing: MIN,
  },
  {
    name: '503 with advice (interval 300)',
    transports: [longPolling],
    fixture: () => bayeuxFixture('handshake-503-advice'),
    spacing: 300,
  },
  {
    name: 'HTTP 503 Retry-After: 1',
    transports: [longPolling],
    fixture: () => bayeuxFixture('http-503-retry-after'),
    spacing: 1000,
  },
  // One transport a path: falling back to the next transport is immediate by design, so
  // a WebSocket attempt and the long-poll right after it are not two retries of one path.
  {
    name: 'blackhole (WebSocket)',
    transports: [websocket],
    fixture: () => tcpFixture('blackhole'),
    spacing: MIN,
  },
  {
    name: 'blackhole (long-polling)',
    transports: [longPolling],
    fixture: () => tcpFixture('blackhole'),
    spacing: MIN,
  },
];

describe('a client under a server that keeps failing', () => {
  it(`keeps every failure path within its backoff (minReconnectDelay ${MIN} ms, ${CLIENTS} clients a path)`, async () => {
    const runs = await Promise.all(
      paths.map(async (path) => {
        const fixtures = await Promise.all(Array.from({ length: CLIENTS }, () => path.fixture()));
        open.push(...fixtures);
        const clients = fixtures.map((f) => {
          return new BayouClient(f.url, {
            WebSocket: WebSocket as unknown as WebSocketConstructor,
            transports: path.transports,
            minReconnectDelay: MIN,
            maxReconnectDelay: 400,
            wsOpenTimeout: 150,
            connectTimeout: 150,
            connectDeadline: 0,
          });
        });
        for (const c of clients) c.connect().catch(() => {});
        return { path, fixtures, clients };
      }),
    );
    await new Promise((r) => setTimeout(r, WINDOW));
    // Every path's attempts as the window closes, before any client is stopped.
    const snapshot = runs.map(({ fixtures }) => fixtures.map((f) => [...f.failures]));
    await Promise.all(runs.flatMap(({ clients }) => clients.map((c) => c.disconnect())));
    const rates: Record<string, number[]> = {};
    for (const [i, { path }] of runs.entries()) {
      const times = snapshot[i] as number[][];
      const counts = times.map((t) => t.length);
      rates[path.name] = counts.map((n) => Math.round((n / WINDOW) * 10000) / 10);
      // Each path was reached: the client made at least one attempt there.
      expect(Math.min(...counts), path.name).toBeGreaterThanOrEqual(1);
      // No two attempts of a client much closer than the backoff's floor or the advice.
      // Timers never fire early, but the gaps are taken where the attempts arrive, in this
      // process: one that arrived late (an event-loop stall on a loaded machine, seen up to
      // 100 ms) shortens the next gap by as much. A path that skips the backoff shows gaps
      // of a few milliseconds, far under half the spacing.
      const gaps = times.flatMap((t) => t.slice(1).map((at, i) => at - (t[i] as number)));
      expect(Math.min(...gaps, Infinity), `${path.name}: gaps ${gaps}`).toBeGreaterThanOrEqual(
        path.spacing / 2,
      );
      // ...so no more than the first attempt and one per `spacing` in the window.
      const allowed = Math.ceil(WINDOW / path.spacing) + 1;
      expect(Math.max(...counts), `${path.name}: ${counts}`).toBeLessThanOrEqual(allowed);
    }
    if (process.env.BAYOU_PRINT_RATES) console.log(rates);
  });
});
