/**
 * `BayouClient`, the public face of the SDK. It owns the user-facing pieces — the
 * subscriptions, the offline queue, batching, extensions, events — and leaves the session
 * and its transports to `Connection`.
 */
import { META_SUBSCRIBE, META_UNSUBSCRIBE, parseChannel, parseError } from '@bayou/protocol';
import { AckExtension } from './ack.js';
import { Backoff } from './backoff.js';
import type { ClientEvents } from './client-events.js';
import { ConnectTrouble } from './connect-trouble.js';
import { Connection } from './connection.js';
import type { DeltaDecoder, SubscribeOptions } from './delta-support.js';
import { Dispatcher, type Outgoing } from './dispatcher.js';
import { Emitter } from './emitter.js';
import { BayouError, ErrorCodes, rejection } from './errors.js';
import { type BayouClientOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { Presence } from './presence.js';
import { RecordCodec, type RecordOptions } from './records/record-codec.js';
import type { RecordStore } from './records/record-store.js';
import { checkRecordSubject, type RecordCallback, type RecordHandle, Records } from './records/records.js';
import { Recovery } from './recovery.js';
import { joinShared } from './share-hook.js';
import type { ConnectionState } from './state.js';
import {
  type ChannelEntry,
  type MessageHandler,
  type Subscription,
  SubscriptionRegistry,
  type SubscriptionStatus,
} from './subscriptions.js';
import type { TransportContext } from './transports/transport.js';
import type { Extension, Message } from './types.js';

export type { ClientEvents };

export class BayouClient {
  private readonly options: ResolvedOptions;
  private readonly events = new Emitter<ClientEvents>();
  private readonly dispatcher: Dispatcher;
  private readonly connection: Connection;
  private readonly subscriptions = new SubscriptionRegistry();
  /** The latest subscribe sent for each subscription: a `402` to an older one is stale. */
  private readonly lastSubscribe = new WeakMap<ChannelEntry, Outgoing>();
  /** Delays between subscribes answered `503`, per subscription. */
  private readonly subscribeBackoff = new WeakMap<ChannelEntry, Backoff>();
  /** Publishes waiting for a connection, oldest first. */
  private outbox: Outgoing[] = [];
  /** Publishes whose transport failed before the reply: sent again before the outbox. */
  private retries: Outgoing[] = [];
  private batchDepth = 0;
  private batched: Outgoing[] = [];
  /** Why the client stopped; publishes reject with it until the next `connect()`. */
  private stopError: BayouError | null = null;
  private readonly records: Records;
  private readonly recovery: Recovery;
  // Declared only: a field initialiser would cost the core bundle bytes for an optional part.
  declare private readonly deltas: DeltaDecoder | undefined;
  private readonly trouble: ConnectTrouble;

  constructor(url: string, options?: BayouClientOptions) {
    if (typeof url !== 'string' || url === '')
      throw new TypeError('BayouClient: url must be a non-empty string');
    this.options = resolveOptions(options);
    this.dispatcher = new Dispatcher(
      {
        onDelivery: (message) => this.subscriptions.dispatch(message),
        onTimeout: (transport, error) => this.connection.timedOut(transport, error),
      },
      this.options.connectTimeout,
      { maxBatchMessages: this.options.maxBatchMessages, maxFrameBytes: this.options.maxFrameBytes },
    );
    const context: TransportContext = {
      url,
      WebSocket: this.options.WebSocket,
      fetch: this.options.fetch,
      streamSenseTimeout: this.options.streamSenseTimeout,
      connectTimeout: this.options.connectTimeout,
      onMessages: (messages, transport) => {
        this.connection.heard(transport);
        this.dispatcher.receive(messages);
      },
      onFailure: (transport, error) => this.connection.transportFailed(transport, error),
      onRequestFailure: (transport, messages, error) =>
        this.connection.requestFailed(transport, messages, error),
    };
    const ack = new AckExtension(this.options.ack, this.options.ackFrames, () =>
      this.connection.reportFrames(),
    );
    this.dispatcher.extensions.push(ack);
    this.recovery = new Recovery(this.options.recover, (gap) => {
      const entry = this.subscriptions.get(gap.channel);
      if (!entry) return;
      this.setStatus(entry, 'gap');
      this.events.emit('gap', gap);
    });
    this.dispatcher.extensions.push(this.recovery);
    this.deltas = this.options.deltas?.(
      this.subscriptions,
      () => this.connection.sendable && this.resume(false),
    );
    if (this.deltas) this.dispatcher.extensions.push(this.deltas);
    // Records ride on ordinary subscriptions; the codec negotiates and decodes them.
    const codec = new RecordCodec();
    this.dispatcher.extensions.push(codec);
    this.records = new Records(codec, {
      subscribe: (channel, handler) => this.subscribe(channel, handler),
      batch: (fn) => this.batch(fn),
    });
    this.trouble = new ConnectTrouble(url, this.options.connectDeadline, (e) => this.events.emit('error', e));
    this.events.on('state', (state) => state === 'connected' && this.trouble.connected());
    this.connection = new Connection(this.options, this.dispatcher, context, {
      onState: (next, previous) => this.events.emit('state', next, previous),
      onTransport: (next, previous, reason) => this.events.emit('transport', next, previous, reason),
      onConnected: (newSession) => this.resume(newSession),
      onStopped: (error) => this.stopped(error),
      onAttemptFailed: (error) => this.trouble.failed(error),
    });
    const tab = this.options.sharedConnection !== false ? joinShared(url, options ?? {}) : null;
    // biome-ignore lint/correctness/noConstructorReturn: a tab of a shared connection (src/shared/tab.ts) stands in for this client, so `new BayouClient()` keeps working
    if (tab !== null) return tab as BayouClient;
  }

  /** `disconnected | connecting | connected | reconnecting`. */
  get state(): ConnectionState {
    return this.connection.state;
  }

  /** The transport in use (`'websocket'`, `'streaming'`, `'long-polling'`), or `null` while not connected. */
  get transport(): string | null {
    return this.connection.transport?.name ?? null;
  }

  /** The Bayeux `clientId` of the current session, or `null`. */
  get clientId(): string | null {
    return this.connection.session;
  }

  on<K extends keyof ClientEvents>(event: K, listener: ClientEvents[K]): () => void {
    return this.events.on(event, listener);
  }

  /** Adds an extension to the pipeline; returns the function that removes it. */
  use(extension: Extension): () => void {
    this.dispatcher.extensions.push(extension);
    return () => {
      const i = this.dispatcher.extensions.indexOf(extension);
      if (i >= 0) this.dispatcher.extensions.splice(i, 1);
    };
  }

  /** Handshakes and connects; rejects if the server refuses for good, or after `connectDeadline` ms. */
  connect(): Promise<void> {
    this.stopError = null;
    return this.trouble.within(this.connection.connect());
  }

  /** Leaves the server; pending publishes reject with `BAYOU_ERR_DISCONNECTED`. */
  disconnect(): Promise<void> {
    return this.connection.disconnect();
  }

  /**
   * Calls `handler` with every message on `channel` (`/a/*` and `/a/**` allowed). The
   * subscription outlives reconnects and re-handshakes until `unsubscribe()`. With
   * `{ delta: true }` the server sends deltas, which handlers get as whole messages.
   */
  subscribe(channel: string, handler: MessageHandler, options?: SubscribeOptions): Subscription {
    const info = parseChannel(channel);
    if (!info || info.kind === 'meta') throw new TypeError(`BayouClient: cannot subscribe to "${channel}"`);
    if (typeof handler !== 'function') throw new TypeError('BayouClient: subscribe needs a handler function');
    // A pattern's deltas are never granted: the server sends its messages whole.
    if (options?.delta) {
      if (!this.deltas) throw new TypeError('BayouClient: no deltas option');
      this.deltas.last.set(channel, null);
    }
    const { entry, ready } = this.subscriptions.add(channel, handler);
    if (!entry.confirmed && !entry.inFlight && this.connection.sendable) this.send(this.subscribeItem(entry));
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
        this.recovery.forget(channel);
        this.deltas?.last.delete(channel);
        if (this.connection.sendable) {
          this.subscriptions.forget(channel);
          this.send(this.unsubscribeItem(channel));
        }
      },
    };
  }

  /**
   * Follows a record subject: `callback(image, changedFields)` runs with the full image
   * after the snapshot and after every change. Listeners on one subject share one server
   * subscription whose options merge those of every open listener (union of `fields`,
   * highest `maxFrequency`); each listener's image holds only the fields it asked for.
   */
  record(subject: string, options: RecordOptions, callback: RecordCallback): RecordHandle {
    checkRecordSubject(subject);
    if (typeof callback !== 'function') throw new TypeError('BayouClient: record needs a callback function');
    return this.records.record(subject, options, callback);
  }

  /**
   * The framework-agnostic store of a record subject (`subscribe(listener)` returns an
   * unsubscribe; `getSnapshot()` is stable until a field changes; `getField(name)`), for a
   * UI library to bind. It subscribes on the server while it has listeners.
   */
  recordStore(subject: string, options: RecordOptions = {}): RecordStore {
    checkRecordSubject(subject);
    return this.records.store(subject, options);
  }

  /**
   * Who is in `channel`, on a server that keeps presence there: a store (`subscribe`,
   * `getSnapshot`) that follows joins and leaves while it has listeners, and `members()`.
   */
  presence(channel: string): Presence {
    const info = parseChannel(channel);
    if (info?.kind !== 'broadcast' || info.wildcard) {
      throw new TypeError(`BayouClient: presence needs a broadcast channel, got "${channel}"`);
    }
    return new Presence(this, channel);
  }

  /** Publishes `data` on `channel`; settled by the server's reply. */
  publish(channel: string, data: unknown): Promise<void> {
    const info = parseChannel(channel);
    if (!info || info.kind === 'meta' || info.wildcard) {
      throw new TypeError(`BayouClient: cannot publish to "${channel}"`);
    }
    return this.userMessage({ channel, data }).then(() => undefined);
  }

  /** Sends `data` to a `/service/**` channel and resolves with the `data` of the server's reply. */
  request<T = unknown>(channel: string, data: unknown): Promise<T> {
    const info = parseChannel(channel);
    if (info?.kind !== 'service' || info.wildcard) {
      throw new TypeError(`BayouClient: request needs a /service channel, got "${channel}"`);
    }
    return this.userMessage({ channel, data }, true).then((reply) => reply.data as T);
  }

  /** Sends every message `fn` produces as one batch: one frame, one request. */
  batch<T>(fn: () => T): T {
    this.batchDepth++;
    try {
      return fn();
    } finally {
      if (--this.batchDepth === 0 && this.batched.length > 0) this.sendNow(this.batched.splice(0));
    }
  }

  // ── internals ────────────────────────────────────────────────────────────────

  private userMessage(message: Message, awaitData = false): Promise<Message> {
    return new Promise((resolve, reject) => {
      const item: Outgoing = {
        message,
        awaitData,
        onReply: (reply) => (reply.successful ? resolve(reply) : reject(rejection(reply))),
        onFail: (error, retry) => (retry ? this.enqueue(item, true) : reject(error)),
      };
      this.enqueue(item, false);
    });
  }

  /** Sends now when connected, otherwise queues (a retried message ahead of new ones). */
  private enqueue(item: Outgoing, retry: boolean): void {
    if (!retry && this.stopError) {
      item.onFail(this.stopError, false);
    } else if (this.connection.sendable) {
      this.send(item);
    } else if (retry) {
      this.retries.push(item);
    } else if (this.outbox.length + this.retries.length >= this.options.maxQueuedMessages) {
      const error = `offline queue full (${this.options.maxQueuedMessages} messages)`;
      item.onFail(new BayouError(ErrorCodes.QUEUE_FULL, error), false);
    } else {
      this.outbox.push(item);
    }
  }

  private send(item: Outgoing): void {
    if (this.batchDepth > 0) this.batched.push(item);
    else this.sendNow([item]);
  }

  private sendNow(items: Outgoing[]): void {
    const transport = this.connection.sendable;
    if (!transport) {
      const error = new BayouError(ErrorCodes.TRANSPORT, 'not connected');
      for (const item of items) item.onFail(error, true);
      return;
    }
    const clientId = this.connection.session ?? undefined;
    for (const item of items) item.message.clientId = clientId;
    this.dispatcher.send(transport, items, this.options.connectTimeout);
  }

  private subscribeItem(entry: ChannelEntry): Outgoing {
    entry.inFlight = true;
    const item: Outgoing = {
      message: { channel: META_SUBSCRIBE, subscription: entry.channel },
      onReply: (reply) => {
        if (reply.successful) {
          this.subscribeBackoff.delete(entry);
          const gaps = this.recovery.takeGaps(reply.id);
          this.subscriptions.confirm(entry);
          this.setStatus(entry, gaps.some((g) => g.channel === entry.channel) ? 'gap' : 'live');
          for (const gap of gaps) this.events.emit('gap', gap);
          return;
        }
        const code = parseError(reply.error)?.code;
        if (code === 402) return this.sessionGone(entry, item);
        if (code === 503) return this.retryLater(entry, item);
        const error = rejection(reply);
        this.subscriptions.refuse(entry, error);
        this.setStatus(entry, 'failed');
        this.events.emit('error', error);
      },
      onFail: (_error, retry) => {
        this.subscriptions.retry(entry);
        // Its request failed alone, the connection is up: send it again now (the delay is past).
        if (retry && this.connection.sendable && this.lastSubscribe.get(entry) === item) this.resume(false);
      },
    };
    this.lastSubscribe.set(entry, item);
    return item;
  }

  /** A subscribe answered `503` (engine away, e.g. Redis restarting): sent again after a backoff. */
  private retryLater(entry: ChannelEntry, item: Outgoing): void {
    if (this.lastSubscribe.get(entry) !== item) return;
    this.subscriptions.retry(entry);
    let backoff = this.subscribeBackoff.get(entry);
    if (backoff === undefined) {
      backoff = new Backoff(this.options.minReconnectDelay, this.options.maxReconnectDelay);
      this.subscribeBackoff.set(entry, backoff);
    }
    setTimeout(() => {
      if (!entry.confirmed && !entry.inFlight && this.connection.sendable) this.resume(false);
    }, backoff.next());
  }

  /**
   * A subscribe answered `402`: not a refusal, the session it went on is gone (its node
   * died, it expired). The subscription stays and goes out again on the next session —
   * at once if that session is already up (its resubscribes went out before this reply).
   * A reply to an older attempt, overtaken by a newer subscribe, changes nothing.
   */
  private sessionGone(entry: ChannelEntry, item: Outgoing): void {
    if (this.lastSubscribe.get(entry) !== item) return;
    this.subscriptions.retry(entry);
    const session = this.connection.session;
    if (this.connection.sendable && session !== null && session !== item.message.clientId) this.resume(false);
  }

  private unsubscribeItem(channel: string): Outgoing {
    return { message: { channel: META_UNSUBSCRIBE, subscription: channel }, onReply() {}, onFail() {} };
  }

  /** Connected again: resubscribe (everything, after a new handshake), then send what waited. */
  private resume(newSession: boolean): void {
    if (newSession) {
      for (const entry of this.subscriptions.resetSession()) {
        if (entry.status !== 'pending') this.setStatus(entry, 'recovering');
      }
      this.records.newSession();
    }
    const { unsubscribe, subscribe } = this.subscriptions.pending();
    const items: Outgoing[] = [];
    for (const channel of unsubscribe) {
      this.subscriptions.forget(channel);
      items.push(this.unsubscribeItem(channel));
    }
    for (const entry of subscribe) items.push(this.subscribeItem(entry));
    items.push(...this.retries.splice(0), ...this.outbox.splice(0));
    if (items.length > 0) this.sendNow(items);
  }

  private setStatus(entry: ChannelEntry, status: SubscriptionStatus): void {
    if (entry.status === status) return;
    entry.status = status;
    this.events.emit('subscription', entry.channel, status);
  }

  private stopped(error: BayouError): void {
    this.stopError = error;
    const waiting = [...this.retries.splice(0), ...this.outbox.splice(0), ...this.batched.splice(0)];
    for (const item of waiting) item.onFail(error, false);
    this.subscriptions.rejectWaiters(error);
    if (error.code !== ErrorCodes.DISCONNECTED) this.events.emit('error', error);
  }
}
