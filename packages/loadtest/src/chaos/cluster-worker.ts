/**
 * A worker process of the cluster chaos run: holds a share of the `@bayou/client`
 * instances (options as they ship, limited to one transport), records every
 * numbered message each one receives per room, and times how long the clients of a dead
 * node take to receive again on their new session. Counts are made here and only the
 * verdict travels back, so the parent's IPC stays small at 1,000 clients.
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BayouClient, type Subscription, type WebSocketConstructor } from '@bayou/client';
import { isMetaChannel, META_CONNECT, META_HANDSHAKE, META_SUBSCRIBE } from '@bayou/protocol';
import WebSocket from 'ws';
import { clientTransports } from './client-transports.js';
import type { FromWorker, Loss, ToWorker, WorkerClient, WorkerResult } from './cluster-messages.js';
import { receivingAgain } from './storm.js';

const MAX_LOSSES_LISTED = 20;

/** `ws` with its opening and closing noted on the client's timeline. */
function timedWebSocket(w: { note(event: string): void }): WebSocketConstructor {
  class Timed extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      w.note('ws new');
      this.once('open', () => w.note('ws open'));
      this.once('close', (code) => w.note(`ws close ${code}`));
    }
  }
  return Timed as unknown as WebSocketConstructor;
}

class Watched {
  readonly client: BayouClient;
  /** room → seq → times received. */
  readonly got = new Map<number, Map<number, number>>();
  /** Every clientId the client had, in order (a new one after each re-handshake). */
  readonly clientIds: string[] = [];
  gaps = 0;
  lastSubscribeReply = '';
  /** Date.now() of its last message in any room. */
  lastAny = 0;
  readonly subs = new Map<number, Subscription>();
  /** room → Date.now() of its last message. */
  readonly lastAt = new Map<number, number>();
  /** Set when the client's node died: since when, and the session it lost. */
  down: { at: number; clientId: string } | null = null;
  /**
   * When, after `down`, its connection was first cut (Date.now(); 0 until then): a paced
   * drain hands its session over up to `drainSpread` after the signal, and until then its
   * node still serves it.
   */
  cutAt = 0;
  /** When its connection was last cut (the node-down notice may come after a quick drain cut it). */
  lastCutAt = 0;
  /**
   * Seen receiving again since `down`, counted at its node's next down or the run's end
   * (`settle`). `provisional`: on its old session before any cut, which a later cut (its
   * session handed over only then, at a paced drain) takes back.
   */
  back: { ms: number; rehandshook: boolean; provisional: boolean } | null = null;

  /**
   * ms from `down` until it was connected again after its last cut (a WebSocket open on
   * another node and its connect answered there), 0 until then: unlike receiving again, not
   * held up by the wait for its room's next message.
   */
  connectedAgain = 0;

  /** Its connection was cut: closed, or a long-poll told to come back after an interval. */
  cut(): void {
    this.lastCutAt = Date.now();
    this.connectedAgain = 0;
    if (this.down === null) return;
    this.cutAt = this.lastCutAt;
    if (this.back?.provisional === true) this.back = null;
  }

  /** Its recovery, once final: counted (the slow ones, and those that handshook again, listed). */
  settle(): void {
    const { down, back } = this;
    if (down === null || back === null) return;
    recoveries.push(back.ms);
    if (this.spec.transport === 'long-polling') recoveriesLongPolling.push(back.ms);
    if (this.connectedAgain > 0) reconnections.push(Math.min(this.connectedAgain, back.ms));
    this.connectedAgain = 0;
    if ((back.ms > SLOW_MS || back.rehandshook) && slow.length < 50)
      slow.push({
        client: this.spec.index,
        transport: this.spec.transport,
        at: down.at,
        ms: back.ms,
        timeline: this.timeline,
        clientIds: this.clientIds,
      });
    this.down = null;
    this.back = null;
  }
  /** What happened to it since its node went down (ms since then: event), for the slow ones. */
  timeline: string[] = [];

  note(event: string): void {
    if (this.down !== null && this.timeline.length < 40)
      this.timeline.push(`${Date.now() - this.down.at}:${event}`);
  }

  constructor(
    readonly spec: WorkerClient,
    url: string,
  ) {
    this.client = new BayouClient(url, {
      transports: clientTransports(spec.transport),
      WebSocket: timedWebSocket(this),
    });
    this.client.on('state', (state) => {
      this.note(state);
      if (state === 'reconnecting') this.cut();
      else if (state === 'connected' && this.down !== null && this.cutAt > 0)
        this.connectedAgain ||= Date.now() - this.down.at;
    });
    this.client.on('gap', () => {
      this.gaps++;
    });
    this.client.use({
      incoming: (message) => {
        if (message.channel === META_HANDSHAKE && message.successful === true) {
          count(handshakes, Math.floor(Date.now() / 100));
          const previous = this.clientIds.at(-1);
          this.clientIds.push(String(message.clientId));
          // Against a cluster the run did not start, a new session is how a lost node shows.
          this.settle();
          if (sessionLoss && previous !== undefined && this.down === null) {
            this.moved = true;
            this.down = { at: this.lastAny || Date.now(), clientId: previous };
          }
        }
        if (
          message.channel !== undefined &&
          isMetaChannel(message.channel) &&
          message.channel !== META_CONNECT
        )
          this.note(
            `${message.channel.slice(6)} ${message.successful === true ? 'ok' : String(message.error)}`,
          );
        else if (message.channel === META_CONNECT && message.successful !== true)
          this.note(`connect ${String(message.error)}`);
        // A connect answered "come back after an interval" (the usual advice has none): at a
        // paced drain, its session was handed over, and a long-poll sees nothing else of it.
        else if (message.channel === META_CONNECT && Number(message.advice?.interval) > 0) this.cut();
        if (message.channel === META_SUBSCRIBE)
          this.lastSubscribeReply = `${new Date().toISOString()} ${JSON.stringify(message)}`;
        return message;
      },
    });
  }

  /** Its node went down at some point of the run: its latencies are not a stayer's. */
  moved = false;

  receive(room: number, seq: number, t: unknown): void {
    if (!this.moved && this.down === null && typeof t === 'number') {
      const now = Date.now();
      const tenth = Math.floor(now / 100);
      let byMs = stayerLatency.get(tenth);
      if (byMs === undefined) {
        byMs = new Map();
        stayerLatency.set(tenth, byMs);
      }
      count(byMs, Math.max(0, now - t));
    }
    let seen = this.got.get(room);
    if (seen === undefined) {
      seen = new Map();
      this.got.set(room, seen);
    }
    seen.set(seq, (seen.get(seq) ?? 0) + 1);
    this.lastAt.set(room, Date.now());
    this.lastAny = Date.now();
    delivered++;
    const id = this.client.clientId;
    const down = this.down;
    if (
      down !== null &&
      this.back === null &&
      receivingAgain(id, down.clientId, Math.max(down.at, this.cutAt), t)
    )
      this.back = {
        ms: Date.now() - down.at,
        rehandshook: id !== down.clientId,
        provisional: id === down.clientId && this.cutAt === 0,
      };
  }
}

/** The storm's figures: stayers' latencies and handshakes, per tenth of a second (bounded by the run's length). */
const stayerLatency = new Map<number, Map<number, number>>();
const handshakes = new Map<number, number>();
const count = (m: Map<number, number>, k: number): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};

/** This process's event-loop delay: the longest per second, `[second since the epoch, ms]`. */
const loopDelay: [number, number][] = [];
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();

let watched: Watched[] = [];
let probe = false;
let sessionLoss = false;
let delivered = 0;
const recoveries: number[] = [];
const recoveriesLongPolling: number[] = [];
const reconnections: number[] = [];
const SLOW_MS = 15_000;
const slow: WorkerResult['slow'] = [];
let expected: number[][] | null = null;
let completeSent = false;
const post = (m: FromWorker) => process.send?.(m);

async function start(url: string, prefix: string, specs: WorkerClient[]): Promise<void> {
  watched = specs.map((s) => new Watched(s, url));
  // Connect in small waves: 250 handshakes at once through one balancer is a storm of its own.
  for (let i = 0; i < watched.length; i += 25) {
    await Promise.all(
      watched.slice(i, i + 25).map(async (w) => {
        const subs = w.spec.rooms.map((room) => {
          const sub = w.client.subscribe(`${prefix}${room}`, (m) => {
            const data = m.data as { seq?: unknown; t?: unknown } | undefined;
            if (typeof data?.seq === 'number') w.receive(room, data.seq, data.t);
          });
          w.subs.set(room, sub);
          return sub;
        });
        await w.client.connect();
        await Promise.all(subs.map((s) => s.ready));
      }),
    );
  }
  post({ type: 'ready' });
  setInterval(tick, 1000).unref();
}

let lastDelivered = 0;
function tick(): void {
  loopDelay.push([Math.floor(Date.now() / 1000), Math.round(loop.max / 1e6)]);
  loop.reset();
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
    w.settle();
    const id = w.client.clientId;
    if (id?.startsWith(`${nodeId}.`) && w.down === null) {
      w.moved = true;
      w.down = { at, clientId: id };
      w.cutAt = w.lastCutAt >= at ? w.lastCutAt : 0;
      w.back = null;
      w.timeline = [];
    }
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
    recoveriesLongPolling,
    reconnections,
    slow,
    unrecovered: 0,
    losses: [],
    stayerLatency: [...stayerLatency].flatMap(([tenth, byMs]) =>
      [...byMs].map(([ms, n]): [number, number, number] => [tenth, ms, n]),
    ),
    handshakes: [...handshakes],
    probe,
    loopDelay,
  };
  const acceptedSets = accepted.map((seqs) => new Set(seqs));
  for (const w of watched) w.settle();
  for (const w of watched) {
    r.gaps += w.gaps;
    if (w.client.state !== 'connected') r.stranded++;
    if (w.down !== null) r.unrecovered++;
    for (const room of w.spec.rooms) {
      const seen = w.got.get(room) ?? new Map<number, number>();
      let missed: Loss | null = null;
      for (const seq of accepted[room] ?? []) {
        r.expected++;
        if ((seen.get(seq) ?? 0) > 0) {
          r.delivered++;
          continue;
        }
        r.lost++;
        if (missed === null) {
          const { index: client, transport } = w.spec;
          missed = {
            client,
            transport,
            room,
            lost: 0,
            first: seq,
            last: seq,
            gaps: w.gaps,
            clientIds: w.clientIds,
            state: `${w.client.state} ${w.client.transport ?? ''} ${w.subs.get(room)?.status ?? ''}`,
            lastSubscribeReply: w.lastSubscribeReply,
            lastReceivedAt: w.lastAt.get(room) ?? 0,
            timeline: w.timeline,
          };
          if (r.losses.length < MAX_LOSSES_LISTED) r.losses.push(missed);
        }
        missed.lost++;
        missed.last = seq;
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
  if (m.type === 'start') {
    sessionLoss = m.sessionLoss;
    probe = m.probe === true;
    start(m.url, m.prefix, m.clients).catch((err: Error) => post({ type: 'failed', message: err.message }));
  } else if (m.type === 'node-down') nodeDown(m.nodeId, m.at);
  else if (m.type === 'expect') expected = m.accepted;
  else if (m.type === 'finish') void finish();
});
process.on('disconnect', () => process.exit(0));
