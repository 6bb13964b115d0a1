/**
 * A tiny Bayeux-over-WebSocket server for the tests: handshake, connect (held), subscribe,
 * publish with fan-out. It can drop or delay chosen messages so the tests can check that
 * the load tester notices, and it records the remote addresses it saw.
 */
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export interface TinyServerOptions {
  /** Message ids (the load tester's data.i) never delivered to anyone. */
  dropIds?: readonly number[];
  /** Message ids delivered this many ms late. */
  delayIds?: readonly number[];
  delayMs?: number;
  /** Closes the sockets of the first this many subscribers 20 ms after they subscribed (code 4001). */
  kick?: number;
}

interface Msg {
  channel: string;
  clientId?: string;
  id?: string;
  subscription?: string;
  data?: { i?: number };
  advice?: { timeout?: number };
}

export interface TinyServer {
  url: string;
  remoteAddresses: Set<string>;
  /** `address:port` of every connection accepted. */
  remoteEnds: Set<string>;
  close(): Promise<void>;
}

export async function startTinyServer(options: TinyServerOptions = {}): Promise<TinyServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/bayeux' });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const rooms = new Map<string, Set<WebSocket>>();
  const remoteAddresses = new Set<string>();
  const remoteEnds = new Set<string>();
  const drop = new Set(options.dropIds ?? []);
  const delay = new Set(options.delayIds ?? []);
  let nextId = 0;
  let kicked = 0;
  const fanOut = (m: Msg) => {
    const frame = JSON.stringify([{ channel: m.channel, data: m.data }]);
    for (const ws of rooms.get(m.channel) ?? []) ws.send(frame);
  };
  const handle = (ws: WebSocket, m: Msg): Msg[] => {
    switch (m.channel) {
      case '/meta/handshake':
        return [{ channel: m.channel, id: m.id, clientId: `c${nextId++}`, successful: true } as Msg];
      case '/meta/connect':
        // Answer only the first connect (advice timeout 0); hold the others forever.
        return m.advice?.timeout === 0
          ? [{ channel: m.channel, clientId: m.clientId, successful: true } as Msg]
          : [];
      case '/meta/subscribe': {
        const set = rooms.get(m.subscription!) ?? new Set();
        rooms.set(m.subscription!, set.add(ws));
        if (kicked++ < (options.kick ?? 0)) setTimeout(() => ws.close(4001, 'kicked'), 20);
        return [{ ...m, successful: true } as Msg];
      }
      default: {
        const i = m.data?.i ?? -1;
        if (delay.has(i)) setTimeout(() => fanOut(m), options.delayMs ?? 200);
        else if (!drop.has(i)) fanOut(m);
        return [];
      }
    }
  };
  wss.on('connection', (ws, req) => {
    remoteAddresses.add(req.socket.remoteAddress ?? '');
    remoteEnds.add(`${req.socket.remoteAddress}:${req.socket.remotePort}`);
    ws.on('message', (raw) => {
      const replies = (JSON.parse(raw.toString()) as Msg[]).flatMap((m) => handle(ws, m));
      if (replies.length > 0) ws.send(JSON.stringify(replies));
    });
    ws.on('close', () => {
      for (const set of rooms.values()) set.delete(ws);
    });
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/bayeux`,
    remoteAddresses,
    remoteEnds,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
}
