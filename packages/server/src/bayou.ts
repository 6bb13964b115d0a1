/**
 * The protocol engine of one node: sessions, subscriptions, services and the engine
 * seam, reached by applications as `app.bayou`. Transports hand it batches of messages
 * (`handleBatch`) and tell it when their sockets and requests go away.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { expandChannel, formatError, type Message, parseChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { type BatchContext, replyTo, sendReply } from './bayeux/batch-context.js';
import { connectReplyJson } from './bayeux/connect.js';
import { processBatch } from './bayeux/dispatcher.js';
import { SubscriptionIndex } from './channels/subscription-index.js';
import type { Engine, EngineNode, HistoryPolicy } from './engine/engine.js';
import { MemoryEngine } from './engine/memory/memory-engine.js';
import { BayouError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import type { Provider } from './records/providers.js';
import { recordEncoding } from './records/record-codec.js';
import { readRecordRequest } from './records/record-options.js';
import { RecordStore } from './records/record-store.js';
import { BrowserSlots } from './session/browser-slots.js';
import { Outbound } from './session/outbound.js';
import type { PendingPoll, Session, SessionHost, SocketLink } from './session/session.js';
import { SessionRegistry, type SweepHandler } from './session/session-registry.js';

const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };

export interface ServiceContext {
  session: Session;
  message: Message;
  bayou: Bayou;
}
export type ServiceHandler = (data: unknown, ctx: ServiceContext) => unknown;
export type RemovalReason = 'disconnect' | 'timeout' | 'slow-consumer' | 'shutdown';

export interface BayouEvents {
  session: [session: Session];
  'session:removed': [session: Session, reason: RemovalReason];
  subscribe: [session: Session, channel: string];
  unsubscribe: [session: Session, channel: string];
}

export class Bayou extends EventEmitter<BayouEvents> implements SessionHost, SweepHandler {
  readonly registry: SessionRegistry;
  readonly index = new SubscriptionIndex();
  readonly records: RecordStore;
  readonly outbound: Outbound;
  readonly stats = { messagesIn: 0, slowConsumers: 0, publishes: 0 };
  readonly maxQueuedMessages: number;
  /** The usual connect advice, serialized once. */
  readonly connectAdvice: string;
  readonly multipleClientsAdvice: string;
  private readonly adviceFields: Record<string, unknown>;
  private readonly services = new Map<string, ServiceHandler>();
  private readonly browserPolls: BrowserSlots;
  readonly nodeId = randomBytes(4).toString('base64url');
  private readonly node: EngineNode = {
    nodeId: this.nodeId,
    deliver: (publication) => {
      this.index.deliver(publication.channel, publication.payload);
    },
    forwarded: async () => ({ status: 501, body: '[]' }),
  };

  constructor(
    readonly options: ResolvedOptions,
    readonly log: FastifyBaseLogger,
    readonly engine: Engine = new MemoryEngine(),
  ) {
    super();
    this.maxQueuedMessages = options.maxQueuedMessages;
    this.adviceFields = { reconnect: 'retry', interval: options.interval, timeout: options.timeout };
    this.connectAdvice = JSON.stringify(this.adviceFields);
    this.multipleClientsAdvice = JSON.stringify({
      reconnect: 'retry',
      interval: options.multiSessionInterval,
      'multiple-clients': true,
    });
    this.registry = new SessionRegistry(this, options.maxInterval);
    this.browserPolls = new BrowserSlots(options.maxSessionsPerBrowser);
    this.records = new RecordStore(
      new Map(options.records.map((p) => [p.pattern, p])),
      options.providerLinger,
    );
    this.outbound = new Outbound(
      (s) => this.completeConnect(s),
      (s) => this.dropSlowConsumer(s),
      options.maxBufferedBytes,
      options.longPollDelay,
    );
  }

  async start(): Promise<void> {
    await this.engine.start(this.node);
    this.registry.startSweeping(this.options.sweepInterval, this);
  }

  async close(): Promise<void> {
    this.registry.stopSweeping();
    for (const session of [...this.registry.values()]) this.removeSession(session, 'shutdown');
    this.records.close();
    await this.engine.close();
  }

  // ---- public API -------------------------------------------------------------------

  /** Publishes `data` on a broadcast channel to every subscriber, on every node. */
  publish(channel: string, data: unknown): void {
    const info = parseChannel(channel);
    if (info === null || info.kind !== 'broadcast' || info.wildcard !== null) {
      throw new BayouError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `cannot publish to "${channel}": not a broadcast channel`,
      );
    }
    if (this.records.patternFor(channel) !== undefined) {
      throw new BayouError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `"${channel}" is a record subject: use updateRecord()`,
      );
    }
    this.broadcast(channel, data);
  }

  /** Publish to a channel already known to be a plain broadcast channel: serialized once. */
  broadcast(channel: string, data: unknown): void {
    this.stats.publishes++;
    void this.engine.broker.publish(channel, JSON.stringify({ channel, data }), NO_HISTORY);
  }

  /** Sends `data` on `channel` to one session only (a private message, a service reply). */
  deliver(session: Session, channel: string, data: unknown): void {
    session.enqueue(JSON.stringify({ channel, data }));
  }

  /** Serves a `/service/...` channel (or pattern); the handler's result is the reply. */
  service(channel: string, handler: ServiceHandler): this {
    const info = parseChannel(channel);
    if (info === null || info.kind !== 'service') {
      throw new BayouError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `service channel "${channel}" must start with /service/`,
      );
    }
    if (this.services.has(channel)) {
      throw new BayouError('BAYOU_ERR_DUPLICATE_SERVICE', `a handler for "${channel}" is already registered`);
    }
    this.services.set(channel, handler);
    return this;
  }

  /**
   * Merges `fields` into the image of a record subject (a channel matching one of the
   * `records` patterns); subscribers get the changed fields, conflated per their throttle.
   */
  updateRecord(subject: string, fields: Record<string, unknown>): void {
    if (this.records.patternFor(subject) === undefined) {
      throw new BayouError('BAYOU_ERR_INVALID_CHANNEL', `"${subject}" matches no records pattern`);
    }
    this.records.update(subject, fields);
  }

  /** The latest image of a record subject, or `null` before its first update. */
  recordImage(subject: string): Readonly<Record<string, unknown>> | null {
    return this.records.image(subject);
  }

  /** Feeds record subjects matching `pattern` on demand (first subscriber → `onRequest`). */
  provide(pattern: string, provider: Provider): this {
    const info = parseChannel(pattern);
    if (info === null || info.kind !== 'broadcast') {
      throw new BayouError(
        'BAYOU_ERR_INVALID_CHANNEL',
        `provider pattern "${pattern}" is not a broadcast channel`,
      );
    }
    if (this.records.providers.has(pattern)) {
      throw new BayouError(
        'BAYOU_ERR_DUPLICATE_SERVICE',
        `a provider for "${pattern}" is already registered`,
      );
    }
    this.records.provide(pattern, provider);
    return this;
  }

  getSession(id: string): Session | undefined {
    return this.registry.get(id);
  }

  get sessionCount(): number {
    return this.registry.size;
  }

  subscriberCount(channel: string): number {
    return this.index.subscriberCount(channel);
  }

  // ---- used by handlers and transports ----------------------------------------------

  handleBatch(messages: unknown[], ctx: BatchContext, scanForProto: boolean): void | Promise<void> {
    return processBatch(this, messages, ctx, scanForProto);
  }

  serviceFor(channel: string): ServiceHandler | undefined {
    const exact = this.services.get(channel);
    if (exact !== undefined || this.services.size === 0) return exact;
    for (const name of expandChannel(channel)) {
      const h = this.services.get(name);
      if (h !== undefined) return h;
    }
    return undefined;
  }

  /** The session a message names, or `undefined` after replying `402::session_unknown`. */
  sessionFor(message: Message, ctx: BatchContext): Session | undefined {
    const session = this.registry.get(message.clientId);
    if (session !== undefined && session.state !== 'removed') {
      ctx.session = session;
      return session;
    }
    const reply = replyTo(message, {
      successful: false,
      error: formatError('sessionUnknown'),
      advice: { reconnect: 'handshake', interval: 0 },
    });
    sendReply(ctx, null, reply);
    return undefined;
  }

  subscribe(session: Session, name: string, message?: Message): void {
    if (session.subscriptions.has(name)) return;
    const pattern = this.records.patternFor(name);
    if (pattern !== undefined) {
      session.subscriptions.add(name);
      const request = readRecordRequest(message?.ext);
      this.records.subscribe(session, name, pattern, request, recordEncoding(session));
    } else if (this.index.add(name, session)) {
      void this.engine.broker.subscribe(name);
    }
    this.emit('subscribe', session, name);
  }

  unsubscribe(session: Session, name: string): void {
    if (!session.subscriptions.has(name)) return;
    this.dropSubscription(session, name);
    this.emit('unsubscribe', session, name);
  }

  private dropSubscription(session: Session, name: string): void {
    if (this.records.patternFor(name) !== undefined) {
      session.subscriptions.delete(name);
      this.records.unsubscribe(session, name);
    } else if (this.index.remove(name, session)) {
      void this.engine.broker.unsubscribe(name);
    }
  }

  /** A connect binds the session to the carrier it came on. */
  bindCarrier(session: Session, ctx: BatchContext): void {
    session.transport = ctx.transport;
    if (ctx.socket !== null) {
      if (session.socket !== ctx.socket) {
        session.socket = ctx.socket;
        ctx.bound.push(session);
      }
    } else {
      session.socket = null;
    }
  }

  /** Answers the held connect of `session`, with everything queued when on long-polling. */
  completeConnect(session: Session, advice?: Record<string, unknown>): void {
    const held = session.held;
    if (held === null) return;
    session.held = null;
    if (held.browserId !== null) this.browserPolls.release(held.browserId);
    session.expiresAt = Date.now() + this.options.maxInterval;
    const adviceJson =
      advice === undefined ? this.connectAdvice : JSON.stringify({ ...this.adviceFields, ...advice });
    const ack = session.ack;
    if (held.poll === null && ack === null) {
      session.enqueue(connectReplyJson(held.id, session.id, adviceJson));
      return;
    }
    // The reply carries everything queued (and, with acks, numbers that batch).
    const messages = session.drain();
    const ext = ack !== null ? `{"ack":${ack.next(messages.slice())}}` : undefined;
    messages.push(connectReplyJson(held.id, session.id, adviceJson, ext));
    if (held.poll !== null) held.poll.respond(messages);
    else this.outbound.sendFrame(session, messages);
    if (ack !== null && ack.pending > this.maxQueuedMessages) this.dropSlowConsumer(session);
  }

  acquireBrowserSlot(browserId: string): boolean {
    return this.browserPolls.acquire(browserId);
  }

  /** The WebSocket of `session` closed: keep the session until it expires. */
  socketClosed(session: Session, link: SocketLink): void {
    if (session.socket !== link) return;
    session.socket = null;
    if (session.held !== null && session.held.poll === null) {
      session.held = null;
      session.expiresAt = Date.now() + this.options.maxInterval;
    }
  }

  /** The client went away while its long-poll was held. */
  pollAborted(session: Session, poll: PendingPoll): void {
    const held = session.held;
    if (held === null || held.poll !== poll) return;
    session.held = null;
    if (held.browserId !== null) this.browserPolls.release(held.browserId);
    session.expiresAt = Date.now() + this.options.maxInterval;
  }

  removeSession(session: Session, reason: RemovalReason): void {
    if (session.state === 'removed') return;
    if (session.held !== null) {
      const advice = reason === 'shutdown' ? { reconnect: 'retry' } : { reconnect: 'handshake' };
      this.completeConnect(session, advice);
    }
    session.state = 'removed';
    this.registry.delete(session);
    for (const name of [...session.subscriptions]) this.dropSubscription(session, name);
    session.queue = [];
    this.emit('session:removed', session, reason);
  }

  // ---- SessionHost and SweepHandler ---------------------------------------------------

  scheduleFlush(session: Session): void {
    this.outbound.schedule(session);
  }

  overflow(session: Session): boolean {
    if (session.socket !== null) {
      // A WebSocket drains every turn; a burst larger than the queue goes out early, and
      // the socket's own buffer (maxBufferedBytes) decides whether the reader is slow.
      this.outbound.flush(session);
      if (session.state !== 'removed' && session.queue.length < this.maxQueuedMessages) return true;
      if (session.state !== 'removed') this.dropSlowConsumer(session);
      return false;
    }
    this.dropSlowConsumer(session);
    return false;
  }

  private dropSlowConsumer(session: Session): void {
    this.stats.slowConsumers++;
    this.log.warn({ clientId: session.id }, 'slow consumer: queue limit reached, session dropped');
    // What it could not take is dropped; a held connect is told to handshake again.
    session.queue = [];
    session.socket?.end(1008, 'slow consumer');
    this.removeSession(session, 'slow-consumer');
  }

  connectTimedOut(session: Session): void {
    this.completeConnect(session);
  }

  sessionExpired(session: Session): void {
    this.removeSession(session, 'timeout');
  }
}
