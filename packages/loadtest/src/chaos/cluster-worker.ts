/**
 * A worker process of the cluster chaos run: holds a share of the `@bayou/client`
 * instances (options as they ship, WebSocket or long-polling only), records every
 * numbered message each one receives per room, and times how long the clients of a dead
 * node take to receive again on their new session. Counts are made here and only the
 * verdict travels back, so the parent's IPC stays small at 1,000 clients.
 */
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import WebSocket from 'ws';
import type { FromWorker, ToWorker, WorkerClient, WorkerResult } from './cluster-messages.js';

const MAX_LOSSES_LISTED = 20;

class Watched {
  readonly client: BayouClient;
  /** room → seq → times received. */
  readonly got = new Map<number, Map<number, number>>();
  /** Every clientId the client had, in order (a new one after each re-handshake). */
  readonly clientIds: string[] = [];
  gaps = 0;
  /** Set when the client's node died: since when, and the session it lost. */
  down: { at: number; clientId: string } | null = null;

  constructor(
    readonly spec: WorkerClient,
    url: string,
  ) {
    this.client = new BayouClient(url, {
      transports: [spec.transport === 'websocket' ? websocket : longPolling],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
    });
    this.client.on('gap', () => {
      this.gaps++;
    });
  }

  receive(room: number, seq: number): void {
    let seen = this.got.get(room);
    if (seen === undefined) {
      seen = new Map();
      this.got.set(room, seen);
    }
    seen.set(seq, (seen.get(seq) ?? 0) + 1);
    delivered++;
    const id = this.client.clientId;
    if (id !== null && this.clientIds.at(-1) !== id) this.clientIds.push(id);
    if (this.down !== null && id !== null && id !== this.down.clientId) {
      recoveries.push(Date.now() - this.down.at);
      this.down = null;
    }
  }
}

let watched: Watched[] = [];
let delivered = 0;
const recoveries: number[] = [];
let expected: number[][] | null = null;
let completeSent = false;
const post = (m: FromWorker) => process.send?.(m);

async function start(url: string, prefix: string, specs: WorkerClient[]): Promise<void> {
  watched = specs.map((s) => new Watched(s, url));
  // Connect in small waves: 250 handshakes at once through one balancer is a storm of its own.
  for (let i = 0; i < watched.length; i += 25) {
    await Promise.all(
      watched.slice(i, i + 25).map(async (w) => {
        const subs = w.spec.rooms.map((room) =>
          w.client.subscribe(`${prefix}${room}`, (m) => {
            const seq = (m.data as { seq?: unknown } | undefined)?.seq;
            if (typeof seq === 'number') w.receive(room, seq);
          }),
        );
        await w.client.connect();
        await Promise.all(subs.map((s) => s.ready));
        const id = w.client.clientId;
        if (id !== null) w.clientIds.push(id);
      }),
    );
  }
  post({ type: 'ready' });
  setInterval(tick, 1000).unref();
}

let lastDelivered = 0;
function tick(): void {
  const connected = watched.filter((w) => w.client.state === 'connected').length;
  post({ type: 'tick', delivered: delivered - lastDelivered, connected });
  lastDelivered = delivered;
  if (expected !== null && !completeSent && watched.every((w) => hasAll(w, expected as number[][]))) {
    completeSent = true;
    post({ type: 'complete' });
  }
}

function hasAll(w: Watched, accepted: number[][]): boolean {
  for (const room of w.spec.rooms) {
    const seen = w.got.get(room);
    for (const seq of accepted[room] ?? []) if (!seen?.has(seq)) return false;
  }
  return true;
}

function nodeDown(nodeId: string, at: number): void {
  for (const w of watched) {
    const id = w.client.clientId;
    if (id?.startsWith(`${nodeId}.`) && w.down === null) w.down = { at, clientId: id };
  }
}

function verdict(accepted: number[][]): WorkerResult {
  const r: WorkerResult = {
    clients: watched.length,
    expected: 0,
    delivered: 0,
    lost: 0,
    duplicated: 0,
    unacknowledged: 0,
    gaps: 0,
    stranded: 0,
    recoveries,
    unrecovered: 0,
    losses: [],
  };
  const acceptedSets = accepted.map((seqs) => new Set(seqs));
  for (const w of watched) {
    r.gaps += w.gaps;
    if (w.client.state !== 'connected') r.stranded++;
    if (w.down !== null) r.unrecovered++;
    for (const room of w.spec.rooms) {
      const seen = w.got.get(room) ?? new Map<number, number>();
      for (const seq of accepted[room] ?? []) {
        r.expected++;
        const n = seen.get(seq) ?? 0;
        if (n > 0) r.delivered++;
        else {
          r.lost++;
          if (r.losses.length < MAX_LOSSES_LISTED)
            r.losses.push({
              client: w.spec.index,
              transport: w.spec.transport,
              room,
              seq,
              clientIds: w.clientIds,
            });
        }
      }
      for (const [seq, n] of seen) {
        r.duplicated += n - 1;
        if (!acceptedSets[room]?.has(seq)) r.unacknowledged++;
      }
    }
  }
  return r;
}

async function finish(): Promise<void> {
  const result = verdict(expected ?? []);
  await new Promise<void>((resolve) =>
    process.send?.({ type: 'result', result } satisfies FromWorker, () => resolve()),
  );
  await Promise.race([
    Promise.all(watched.map((w) => w.client.disconnect().catch(() => undefined))),
    new Promise((r) => setTimeout(r, 3000)),
  ]);
  process.exit(0);
}

process.on('message', (m: ToWorker) => {
  if (m.type === 'start')
    start(m.url, m.prefix, m.clients).catch((err: Error) => post({ type: 'failed', message: err.message }));
  else if (m.type === 'node-down') nodeDown(m.nodeId, m.at);
  else if (m.type === 'expect') expected = m.accepted;
  else if (m.type === 'finish') void finish();
});
process.on('disconnect', () => process.exit(0));
