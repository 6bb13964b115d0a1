/**
 * The chaos chat: real `@bayou/client` instances (ack and recovery as they ship) in the
 * CometD benchmark's shape — clients in rooms, one publisher numbering the messages of
 * each room — while connections are killed at random (a WebSocket terminated, a
 * long-poll request aborted) and some clients are held down past the server's
 * `maxInterval`, so their sessions expire and recovery from history is exercised.
 * At the end every client must have received every message of its rooms published after
 * it joined, exactly once: lost and duplicated messages are counted exactly.
 */
import { BayouClient } from '@bayou/client';
import WebSocket from 'ws';
import { assignGroups, seededRandom } from '../groups.js';
import { type ChaosTransport, clientTransports } from './client-transports.js';

export interface ChaosOptions {
  /** Bayeux endpoint, e.g. `http://127.0.0.1:8080/bayeux`. */
  url: string;
  transport: ChaosTransport;
  clients: number;
  rooms: number;
  roomsPerClient: number;
  /** Messages per second the publisher sends (round-robin over rooms). */
  rate: number;
  /** How long the publisher runs, ms. */
  duration: number;
  /**
   * Fewest messages to publish: the publisher goes on past `duration` until this many went
   * out (default 0). It waits for each publish's reply, so how many fit in `duration`
   * depends on the machine's load; a bounded test that needs a stream of some size sets it.
   */
  minPublished?: number;
  /** Mean ms between two connection kills (exponential); 0 kills nothing. */
  chaosInterval: number;
  /** Fraction (0–1) of kills that hold the client down for `outageMs`. */
  outageFraction: number;
  /** How long a held-down client stays unreachable, ms (longer than the server's maxInterval). */
  outageMs: number;
  /** ms to wait after the last publish for everything to arrive. */
  drainMs: number;
  seed: number;
  /** Channel prefix of the rooms. */
  prefix: string;
}

export interface ChaosResult {
  published: number;
  expected: number;
  delivered: number;
  lost: number;
  duplicated: number;
  kills: number;
  outages: number;
  gaps: number;
  /** Clients that did not get back to `connected` by the end. */
  stranded: number;
  /** Clients by the transport they were on at the end (all on `transport` unless one fell back). */
  onTransport: Record<string, number>;
  seconds: number;
}

/** One simulated client's view: what it got, per room, and a way to cut its links. */
class ChaosClient {
  readonly client: BayouClient;
  /** room → seq → times received. */
  readonly got = new Map<number, Map<number, number>>();
  /** room → the first seq the publisher sent after this client was subscribed. */
  readonly from = new Map<number, number>();
  readonly sockets = new Set<WebSocket>();
  readonly requests = new Set<AbortController>();
  downUntil = 0;
  gaps = 0;

  constructor(
    options: ChaosOptions,
    readonly rooms: readonly number[],
  ) {
    const self = this;
    // A WebSocket that the chaos can terminate, and that cannot open during an outage.
    class KillableSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(Date.now() < self.downUntil ? 'ws://127.0.0.1:9/down' : url, protocols);
        self.sockets.add(this);
        this.once('close', () => self.sockets.delete(this));
      }
    }
    const killableFetch: typeof fetch = async (input, init) => {
      if (Date.now() < self.downUntil) throw new TypeError('network down (chaos outage)');
      const abort = followAbort(init?.signal);
      self.requests.add(abort);
      try {
        return killableBody(await fetch(input, { ...init, signal: abort.signal }), () =>
          self.requests.delete(abort),
        );
      } catch (error) {
        self.requests.delete(abort);
        throw error;
      }
    };
    this.client = new BayouClient(options.url, {
      WebSocket: KillableSocket as unknown as typeof globalThis.WebSocket,
      fetch: killableFetch,
      transports: clientTransports(options.transport),
      maxReconnectDelay: 2000,
    } as ConstructorParameters<typeof BayouClient>[1]);
    (this.client as unknown as { on(e: string, f: (...a: unknown[]) => void): void }).on('gap', () => {
      this.gaps++;
    });
  }

  /** Cuts every link of this client at once, as a network failure would. */
  kill(outageMs = 0): void {
    if (outageMs > 0) this.downUntil = Date.now() + outageMs;
    for (const ws of this.sockets) ws.terminate();
    for (const r of this.requests) r.abort();
    this.requests.clear();
  }

  receive(room: number, seq: number): void {
    let seen = this.got.get(room);
    if (seen === undefined) {
      seen = new Map();
      this.got.set(room, seen);
    }
    seen.set(seq, (seen.get(seq) ?? 0) + 1);
  }
}

/** A controller of its own for a request, aborted too when the caller's `signal` is. */
function followAbort(signal: AbortSignal | null | undefined): AbortController {
  const abort = new AbortController();
  if (signal?.aborted) abort.abort(signal.reason);
  else signal?.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
  return abort;
}

/**
 * The response with a body that calls `done` once read to its end: a request stays killable
 * until then, for a stream's body is its link (a long-poll's is read at once).
 */
function killableBody(res: Response, done: () => void): Response {
  if (res.body === null) {
    done();
    return res;
  }
  const body = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: done }));
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Connects every client and subscribes it to its rooms; each room counts from the seq next then. */
async function subscribeAll(clients: readonly ChaosClient[], prefix: string, next: number[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      await c.client.connect();
      await Promise.all(
        c.rooms.map((room) => {
          const sub = c.client.subscribe(`${prefix}${room}`, (m: { data?: unknown }) => {
            const seq = (m.data as { seq?: unknown } | undefined)?.seq;
            if (typeof seq === 'number') c.receive(room, seq);
          });
          return (sub as { ready: Promise<unknown> }).ready.then(() =>
            c.from.set(room, next[room] as number),
          );
        }),
      );
    }),
  );
}

/**
 * Kills a random client's links at exponentially spaced times (an outage for a fraction of
 * them) until `stop()`, which resolves to the counts.
 */
function startChaos(
  clients: readonly ChaosClient[],
  options: ChaosOptions,
): { stop(): Promise<{ kills: number; outages: number }> } {
  const random = seededRandom(options.seed);
  const counts = { kills: 0, outages: 0 };
  let stopped = false;
  const loop = (async () => {
    if (options.chaosInterval <= 0) return;
    while (!stopped) {
      const wait = -Math.log(1 - random()) * options.chaosInterval;
      await sleep(Math.min(wait, options.duration));
      if (stopped) break;
      const victim = clients[Math.floor(random() * clients.length)] as ChaosClient;
      const down = random() < options.outageFraction;
      victim.kill(down ? options.outageMs : 0);
      counts.kills++;
      if (down) counts.outages++;
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return counts;
    },
  };
}

/** What each client should have received since it subscribed, against what it did. */
function tally(clients: readonly ChaosClient[], next: readonly number[]) {
  const t = { expected: 0, delivered: 0, lost: 0, duplicated: 0 };
  for (const c of clients) {
    for (const r of c.rooms) {
      const from = c.from.get(r) ?? (next[r] as number);
      const seen = c.got.get(r) ?? new Map<number, number>();
      for (let seq = from; seq < (next[r] as number); seq++) {
        t.expected++;
        const n = seen.get(seq) ?? 0;
        if (n === 0) t.lost++;
        else {
          t.delivered++;
          t.duplicated += n - 1;
        }
      }
    }
  }
  return t;
}

const isConnected = (c: ChaosClient) => (c.client as unknown as { state: string }).state === 'connected';

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const started = performance.now();
  const groups = assignGroups(options.clients, options.rooms, options.roomsPerClient, options.seed);
  const clients = groups.map((g) => new ChaosClient(options, Array.from(g)));
  /** room → the next seq to publish (1-based); rises as the publisher goes. */
  const next = new Array<number>(options.rooms).fill(1);
  await subscribeAll(clients, options.prefix, next);

  const publisher = new BayouClient(options.url, {
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
  } as ConstructorParameters<typeof BayouClient>[1]);
  await publisher.connect();
  const chaos = startChaos(clients, options);

  let published = 0;
  const end = Date.now() + options.duration;
  const perTick = Math.max(1, Math.round(options.rate / 100));
  let room = 0;
  const least = options.minPublished ?? 0;
  while (Date.now() < end || published < least) {
    const batch: Promise<unknown>[] = [];
    for (let i = 0; i < perTick; i++) {
      const seq = next[room] as number;
      next[room] = seq + 1;
      batch.push(publisher.publish(`${options.prefix}${room}`, { seq }));
      published++;
      room = (room + 1) % options.rooms;
    }
    await Promise.all(batch);
    await sleep(10);
  }
  const { kills, outages } = await chaos.stop();

  // Everyone comes back: wait for outages to end and the stream to drain.
  const deadline = Date.now() + options.outageMs + options.drainMs;
  while (Date.now() < deadline && !(complete(clients, next) && clients.every(isConnected))) await sleep(100);

  const counts = tally(clients, next);
  const stranded = clients.filter((c) => !isConnected(c)).length;
  const onTransport: Record<string, number> = {};
  for (const c of clients) {
    const name = c.client.transport ?? 'none';
    onTransport[name] = (onTransport[name] ?? 0) + 1;
  }
  const gaps = clients.reduce((n, c) => n + c.gaps, 0);
  await Promise.all([
    ...clients.map((c) => c.client.disconnect().catch(() => undefined)),
    publisher.disconnect(),
  ]);
  return {
    published,
    ...counts,
    kills,
    outages,
    gaps,
    stranded,
    onTransport,
    seconds: (performance.now() - started) / 1000,
  };
}

function complete(clients: readonly ChaosClient[], next: readonly number[]): boolean {
  for (const c of clients) {
    for (const r of c.rooms) {
      const from = c.from.get(r);
      if (from === undefined) return false;
      const seen = c.got.get(r);
      for (let seq = from; seq < (next[r] as number); seq++) if (!seen?.has(seq)) return false;
    }
  }
  return true;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
