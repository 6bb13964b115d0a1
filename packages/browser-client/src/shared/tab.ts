/**
 * A tab's client of a shared connection: the public face of `BayouClient`, with the tab's
 * own subscriptions, handlers, listeners, publishes, records and presence, but no session
 * of its own. Every tab asks for the leader lock; the tab holding it runs the hub
 * (`hub.ts`) and so the connection, and the others reach it over a BroadcastChannel. When
 * the leader goes, the next tab in the lock's queue takes over; the tabs send their
 * subscriptions (with the last position they saw of each channel) and their unanswered
 * calls again, and each tab drops a delivery it already had, so none arrives twice.
 */
import { EXT_REPLAY, parseChannel } from '@bayou/protocol';
import type { ClientEvents } from '../client.js';
import { Emitter } from '../emitter.js';
import { BayouError, ErrorCodes } from '../errors.js';
import type { BayouClientOptions } from '../options.js';
import { Presence } from '../presence.js';
import { RecordCodec, type RecordOptions } from '../records/record-codec.js';
import type { RecordStore } from '../records/record-store.js';
import { type RecordCallback, type RecordHandle, Records } from '../records/records.js';
import type { Position } from '../recovery.js';
import type { ConnectionState } from '../state.js';
import { handOut, type MessageHandler, type Subscription, SubscriptionRegistry } from '../subscriptions.js';
import type { Extension, Message } from '../types.js';
import { Hub, randomId } from './hub.js';
import { Seen } from './seen.js';
import {
  type Call,
  type FromHub,
  isToHub,
  type PendingCall,
  type ToHub,
  toBayouError,
  type Wire,
} from './wire.js';
import { startWorker } from './worker-start.js';

/** Milliseconds a tab gives the SharedWorker to lead before it queues for the lead itself. */
const WORKER_START = 3000;

export class SharedTab {
  private readonly id = randomId();
  private readonly events = new Emitter<ClientEvents>();
  private readonly subscriptions = new SubscriptionRegistry();
  private readonly seen = new Seen();
  private readonly calls = new Map<number, PendingCall>();
  private readonly extensions: Extension[] = [];
  private readonly codec = new RecordCodec();
  private readonly records: Records;
  private nextCall = 0;
  private batchDepth = 0;
  private batched: Call[] = [];
  private channel: BroadcastChannel | null = null;
  private hub: Hub | null = null;
  /** Kept: the SharedWorker lives while a tab holds it. */
  private worker: SharedWorker | null = null;
  /** The hub last heard leading; `null` before any. */
  private leaderHub: string | null = null;
  private stop: AbortController | null = null;
  /** This tab holds its own lock: until then it says nothing (the hub would take it for gone). */
  private joined = false;
  private release: (() => void) | null = null;
  private current: ConnectionState = 'disconnected';
  private currentTransport: string | null = null;
  /** The last transport this tab's `transport` listeners heard of. */
  private heardTransport: string | null = null;
  private session: string | null = null;
  private waiting: { resolve(): void; reject(e: BayouError): void }[] = [];
  /** The name of the lock a tab holds for its lifetime (the hub watches it). */
  private readonly lockOf = (tab: string) => `${this.name}\n${tab}`;

  constructor(
    private readonly url: string,
    private readonly options: BayouClientOptions,
    private readonly name: string,
  ) {
    this.records = new Records(this.codec, {
      subscribe: (channel, handler) => this.subscribe(channel, handler),
      batch: (fn) => this.batch(fn),
    });
  }

  get state(): ConnectionState {
    return this.current;
  }
  get transport(): string | null {
    return this.currentTransport;
  }
  /** The shared session's `clientId`: the same in every tab. */
  get clientId(): string | null {
    return this.session;
  }
  /** Whether this tab holds the connection now. */
  get isLeader(): boolean {
    return this.hub !== null;
  }

  on<K extends keyof ClientEvents>(event: K, listener: ClientEvents[K]): () => void {
    return this.events.on(event, listener);
  }

  /** Runs in this tab only: `incoming` on its deliveries, `outgoing` on its publishes. */
  use(extension: Extension): () => void {
    this.extensions.push(extension);
    return () => {
      const i = this.extensions.indexOf(extension);
      if (i >= 0) this.extensions.splice(i, 1);
    };
  }

  connect(): Promise<void> {
    if (this.stop === null) void this.join();
    if (this.current === 'connected') return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  async disconnect(): Promise<void> {
    const stop = this.stop;
    if (stop === null) return;
    this.toHub({ t: 'bye', from: this.id });
    this.stop = null;
    this.joined = false;
    stop.abort();
    const hub = this.hub;
    this.hub = null;
    this.release?.();
    this.release = null;
    this.channel?.close();
    this.channel = null;
    this.leaderHub = null;
    this.currentTransport = null;
    this.heardTransport = null;
    for (const entry of this.subscriptions.resetSession()) entry.status = 'pending';
    const error = new BayouError(ErrorCodes.DISCONNECTED, 'disconnected');
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
    this.subscriptions.rejectWaiters(error);
    for (const w of this.waiting.splice(0)) w.reject(error);
    this.setState('disconnected');
    await hub?.close();
  }

  subscribe(channel: string, handler: MessageHandler): Subscription {
    const info = parseChannel(channel);
    if (!info || info.kind === 'meta') throw new TypeError(`BayouClient: cannot subscribe to "${channel}"`);
    if (typeof handler !== 'function') throw new TypeError('BayouClient: subscribe needs a handler function');
    const { entry, ready } = this.subscriptions.add(channel, handler);
    if (entry.handlers.size === 1 && !entry.inFlight && !entry.confirmed) this.sendSubscribe(channel);
    let live = true;
    return {
      channel,
      ready,
      get status() {
        return entry.status;
      },
      unsubscribe: () => {
        if (!live) return;
        live = false;
        if (!this.subscriptions.remove(channel, handler)) return;
        this.subscriptions.forget(channel);
        this.seen.forget(channel);
        this.toHub({ t: 'unsub', from: this.id, ch: channel });
      },
    };
  }

  record(subject: string, options: RecordOptions, callback: RecordCallback): RecordHandle {
    checkSubject(subject, 'is not a record subject (a plain broadcast channel)');
    if (typeof callback !== 'function') throw new TypeError('BayouClient: record needs a callback function');
    return this.records.record(subject, options, callback);
  }

  recordStore(subject: string, options: RecordOptions = {}): RecordStore {
    checkSubject(subject, 'is not a record subject (a plain broadcast channel)');
    return this.records.store(subject, options);
  }

  presence(channel: string): Presence {
    checkSubject(channel, 'is not a broadcast channel: presence needs one');
    return new Presence(this, channel);
  }

  publish(channel: string, data: unknown): Promise<void> {
    const info = parseChannel(channel);
    if (!info || info.kind === 'meta' || info.wildcard) {
      throw new TypeError(`BayouClient: cannot publish to "${channel}"`);
    }
    return this.call(channel, data, false).then(() => undefined);
  }

  request<T = unknown>(channel: string, data: unknown): Promise<T> {
    const info = parseChannel(channel);
    if (info?.kind !== 'service' || info.wildcard) {
      throw new TypeError(`BayouClient: request needs a /service channel, got "${channel}"`);
    }
    return this.call(channel, data, true) as Promise<T>;
  }

  batch<T>(fn: () => T): T {
    this.batchDepth++;
    try {
      return fn();
    } finally {
      if (--this.batchDepth === 0 && this.batched.length > 0) {
        this.toHub({ t: 'call', from: this.id, calls: this.batched.splice(0) });
      }
    }
  }

  // ── internals ────────────────────────────────────────────────────────────────

  /** Holds this tab's own lock (the hub watches it), says hello, and queues for the leader lock. */
  private async join(): Promise<void> {
    const stop = new AbortController();
    this.stop = stop;
    this.setState('connecting');
    this.channel = new BroadcastChannel(this.name);
    this.channel.onmessage = (e: MessageEvent<Wire>) => this.heard(e.data);
    const held = new Promise<void>((r) => {
      this.release = r;
    });
    const signal = stop.signal;
    // Granted at once, or refused (`true`: an opaque origin, where nothing can be shared).
    const denied = await new Promise<boolean>((done) => {
      const hold = () => {
        done(false);
        return held;
      };
      navigator.locks.request(this.lockOf(this.id), { signal }, hold).catch(() => done(true));
    });
    if (signal.aborted) return;
    if (denied) return this.alone();
    this.joined = true;
    this.resend();
    // With a worker, a tab queues for the lead WORKER_START later: the worker (which may take
    // a moment to load) should not lose the race for it; if it failed, a tab leads then.
    this.worker = startWorker(this.url, this.options, this.name);
    if (this.worker !== null && this.leaderHub === null)
      await new Promise((r) => setTimeout(r, WORKER_START));
    if (signal.aborted) return;
    navigator.locks
      .request(this.name, { signal }, () => {
        if (signal.aborted) return;
        this.hub = new Hub(this.url, this.options, this.id, this.lockOf, (m) => this.broadcast(m));
        this.hub.start(this.leaderHub !== null);
        return held;
      })
      .catch(() => signal.aborted || this.alone());
  }

  /** Web Locks refused (an opaque origin: a sandboxed page): a hub, so a connection, of its own. */
  private alone(): void {
    this.channel?.close();
    this.channel = null;
    this.joined = true;
    this.hub = new Hub(this.url, this.options, this.id, String, (m) => this.heard(m));
    this.hub.start(false);
  }

  /** Hello, every subscription and every unanswered call, to a hub that may not know them. */
  private resend(): void {
    this.toHub({ t: 'hello', from: this.id });
    for (const entry of this.subscriptions.resetSession()) {
      if (entry.status === 'live' || entry.status === 'gap') this.setStatus(entry.channel, 'recovering');
      this.sendSubscribe(entry.channel);
    }
    const calls = [...this.calls.values()].map(({ id, ch, data, req }) => ({ id, ch, data, req }));
    if (calls.length > 0) this.toHub({ t: 'call', from: this.id, calls });
  }

  private sendSubscribe(ch: string): void {
    const entry = this.subscriptions.get(ch);
    if (entry !== undefined) entry.inFlight = true;
    const pos = this.seen.positions(ch);
    this.toHub({ t: 'sub', from: this.id, ch, pos, rec: this.codec.requests.get(ch) });
  }

  private toHub(m: ToHub): void {
    if (!this.joined) return;
    if (this.hub !== null) this.hub.handle(m);
    else this.channel?.postMessage(m);
  }

  /** The hub's word to every tab: the others through the channel, this one directly. */
  private broadcast(m: FromHub): void {
    this.channel?.postMessage(m);
    this.heard(m);
  }

  private heard(m: Wire): void {
    if (isToHub(m)) {
      this.hub?.handle(m);
      return;
    }
    if (('to' in m && m.to !== this.id) || this.stop === null) return;
    switch (m.t) {
      case 'lead':
        if (m.hub === this.leaderHub) return;
        if (this.leaderHub !== null && this.current === 'connected') this.setState('reconnecting');
        this.leaderHub = m.hub;
        this.resend();
        return;
      case 'up': {
        const before = this.heardTransport;
        this.currentTransport = m.transport;
        this.session = m.clientId;
        if (m.transport !== null && m.transport !== before) {
          this.heardTransport = m.transport;
          this.events.emit('transport', m.transport, before, m.reason);
        }
        if (m.state === 'connected') this.setState('connected');
        else if (this.current === 'connected') this.setState('reconnecting');
        return;
      }
      case 'd':
        this.deliver(m.s, m.m);
        return;
      case 'ok':
        if (m.pos !== undefined && this.subscriptions.get(m.ch) !== undefined) this.seen.start(m.ch, m.pos);
        this.confirmed(m.ch, m.error === undefined ? null : toBayouError(m.error));
        return;
      case 'res': {
        const call = this.calls.get(m.id);
        if (call === undefined) return;
        this.calls.delete(m.id);
        if (m.error === undefined) call.resolve(m.value);
        else call.reject(toBayouError(m.error));
        return;
      }
      case 'gap':
        if (this.subscriptions.get(m.info.channel) === undefined) return;
        this.setStatus(m.info.channel, 'gap');
        this.events.emit('gap', m.info);
        return;
      case 'err':
        this.events.emit('error', toBayouError(m.error));
        if (m.fatal) for (const w of this.waiting.splice(0)) w.reject(toBayouError(m.error));
    }
  }

  /** A delivery to the hub's subscription `sub`: once per position, to this tab's handlers of it. */
  private deliver(sub: string, message: Message): void {
    const entry = this.subscriptions.get(sub);
    if (entry === undefined) return;
    const p = message.ext?.[EXT_REPLAY] as Position | undefined;
    if (p !== undefined && typeof p?.offset === 'number' && !this.seen.fresh(sub, message.channel, p)) return;
    let m: Message | null = message;
    for (const ext of this.extensions) if (m !== null && ext.incoming) m = ext.incoming(m);
    if (m !== null) handOut(entry, m);
  }

  private confirmed(ch: string, error: BayouError | null): void {
    const entry = this.subscriptions.get(ch);
    if (entry === undefined) return;
    if (error === null) {
      this.subscriptions.confirm(entry);
      if (entry.status !== 'gap') this.setStatus(ch, 'live');
      return;
    }
    this.subscriptions.refuse(entry, error);
    this.setStatus(ch, 'failed');
    this.events.emit('error', error);
  }

  private call(ch: string, data: unknown, req: boolean): Promise<unknown> {
    let m: Message | null = { channel: ch, data };
    for (const ext of this.extensions) if (m !== null && ext.outgoing) m = ext.outgoing(m);
    if (m === null) return Promise.resolve(undefined);
    const max = this.options.maxQueuedMessages ?? 1000;
    if (this.calls.size >= max) {
      return Promise.reject(new BayouError(ErrorCodes.QUEUE_FULL, `offline queue full (${max} messages)`));
    }
    const call = { id: ++this.nextCall, ch: m.channel, data: m.data, req };
    return new Promise((resolve, reject) => {
      this.calls.set(call.id, { ...call, resolve, reject });
      if (this.batchDepth > 0) this.batched.push(call);
      else this.toHub({ t: 'call', from: this.id, calls: [call] });
    });
  }

  private setStatus(ch: string, status: Subscription['status']): void {
    const entry = this.subscriptions.get(ch);
    if (entry === undefined || entry.status === status) return;
    entry.status = status;
    this.events.emit('subscription', ch, status);
  }

  private setState(next: ConnectionState): void {
    const previous = this.current;
    if (next === previous) return;
    this.current = next;
    this.events.emit('state', next, previous);
    if (next === 'connected') for (const w of this.waiting.splice(0)) w.resolve();
  }
}

function checkSubject(channel: string, what: string): void {
  const info = parseChannel(channel);
  if (info?.kind !== 'broadcast' || info.wildcard) throw new TypeError(`BayouClient: "${channel}" ${what}`);
}
