/**
 * The Bayeux session: handshake, the `/meta/connect` loop, reconnection with backoff, and
 * the choice of transport — WebSocket first, long-polling when it cannot work, and back to
 * WebSocket when a background probe shows it works again. All state changes go through
 * the `StateMachine`; every asynchronous continuation checks `epoch` so that work started
 * before a reconnect or a stop cannot act after it.
 */
import { BAYEUX_VERSION, META_CONNECT, META_DISCONNECT, META_HANDSHAKE } from '@bayou/protocol';
import type { AckMark } from './ack.js';
import { asTransportError, isFinalHandshakeRefusal, isStop, reconnectAdvice, stopError } from './advice.js';
import { Backoff } from './backoff.js';
import type { Dispatcher } from './dispatcher.js';
import { BayouError, ErrorCodes } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { type ConnectionState, StateMachine } from './state.js';
import { TokenRefresh } from './token-refresh.js';
import { TransportSelector } from './transport-selector.js';
import type { Transport, TransportContext, TransportFactory } from './transports/transport.js';
import type { Advice, Message } from './types.js';

export interface ConnectionHooks {
  onState(next: ConnectionState, previous: ConnectionState): void;
  onTransport(next: string, previous: string | null): void;
  /** Connected (again): send what waited; `newSession` after every successful handshake. */
  onConnected(newSession: boolean): void;
  /** The client stopped for good (until the next `connect()`). */
  onStopped(error: BayouError): void;
}

/** The server answered, but not with success: trying another transport will not help. */
class Refusal extends Error {
  readonly reply: Message;
  constructor(reply: Message) {
    super(reply.error ?? 'refused');
    this.reply = reply;
  }
}

type Timer = ReturnType<typeof setTimeout>;

export class Connection {
  private readonly machine: StateMachine;
  private readonly options: ResolvedOptions;
  private readonly dispatcher: Dispatcher;
  private readonly hooks: ConnectionHooks;
  private readonly context: TransportContext;
  private readonly reconnectBackoff: Backoff;
  private readonly probeBackoff: Backoff;
  /** Delays before the messages of a request that failed alone are sent again. */
  private readonly resendBackoff: Backoff;
  /** Bumped on every reconnect and stop; stale continuations compare and bail out. */
  private epoch = 0;
  private clientId: string | null = null;
  /**
   * A handshake succeeded but no connect of its session has yet: the next one to succeed
   * starts a new session for the client, whichever attempt or transport carries it.
   */
  private unannounced = false;
  private active: Transport | null = null;
  private probing: Transport | null = null;
  private readonly selector: TransportSelector;
  private advice: { timeout: number; interval: number } = { timeout: 30000, interval: 0 };
  private timer: Timer | undefined;
  /** Bumped by every `scheduleConnect`, so only the latest scheduled connect runs. */
  private connectTurn = 0;
  private probeTimer: Timer | undefined;
  /** A `/meta/connect` of the loop waits for its reply. */
  private connectInFlight = false;
  /** Dead-link watchdog: when the active transport last received a frame, and when the
   * silence made us renew the held connect (0: not since the last frame). */
  private lastHeard = 0;
  private renewedAt = 0;
  private watchTimer: Timer | undefined;
  /** Successful connect replies on the active transport since it became active. */
  private replies = 0;
  private waiters: { resolve(): void; reject(error: BayouError): void }[] = [];
  private readonly tokens: TokenRefresh;

  constructor(
    options: ResolvedOptions,
    dispatcher: Dispatcher,
    context: TransportContext,
    hooks: ConnectionHooks,
  ) {
    this.options = options;
    this.dispatcher = dispatcher;
    this.context = context;
    this.hooks = hooks;
    this.machine = new StateMachine(hooks.onState);
    this.selector = new TransportSelector(options.transports);
    this.reconnectBackoff = new Backoff(options.minReconnectDelay, options.maxReconnectDelay);
    this.probeBackoff = new Backoff(options.minProbeDelay, options.maxProbeDelay);
    this.resendBackoff = new Backoff(options.minReconnectDelay, options.maxReconnectDelay);
    this.tokens = new TokenRefresh(options.token, options.tokenRefreshMargin, () => this.renewForToken());
  }

  get state(): ConnectionState {
    return this.machine.state;
  }

  get transport(): Transport | null {
    return this.active;
  }

  /** Starts connecting; resolves once connected, rejects if the client stops first. */
  connect(): Promise<void> {
    if (this.machine.state === 'connected') return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.machine.state === 'disconnected') {
      this.machine.set('connecting');
      this.attempt(++this.epoch);
    }
    return done;
  }

  /** Says goodbye to the server (when connected) and stops. */
  async disconnect(): Promise<void> {
    if (this.machine.state === 'disconnected') return;
    const transport = this.active;
    const clientId = this.clientId;
    this.epoch++;
    this.clearTimers();
    if (transport && clientId && this.machine.state === 'connected') {
      const bye = { channel: META_DISCONNECT, clientId };
      await this.dispatcher.request(transport, bye, this.options.connectTimeout).catch(() => {});
    }
    this.stop(new BayouError(ErrorCodes.DISCONNECTED, 'disconnected by the client'));
  }

  /** Whether a user message can go out right now, and on which transport. */
  get sendable(): Transport | null {
    return this.machine.state === 'connected' ? this.active : null;
  }

  /**
   * Some reply on `transport` did not come in time. A WebSocket that is open and silent is
   * set aside like one the watchdog gave up (see `watch`); then as `transportFailed`.
   */
  timedOut(transport: Transport, error: BayouError): void {
    if (transport === this.active && this.watched(transport)) this.selector.demote([transport.name]);
    this.transportFailed(transport, error);
  }

  /** The transport failed, or some reply on it did not come in time. */
  transportFailed(transport: Transport, error: BayouError): void {
    if (transport === this.active) {
      this.lost(0);
    } else {
      transport.close();
      this.dispatcher.fail(transport, error, true);
    }
  }

  /**
   * One request without a connect failed on `transport` (a long-poll answered 502 by a
   * balancer whose next node is dead). The session's connect is held on another request
   * and may well be fine: giving it up would re-handshake or reconnect, and resend the
   * failed message in the same place of the same request sequence, which a round-robin
   * balancer would send to the same dead node every time. Instead the messages alone go
   * again after a backoff delay; a connect that fails still ends the connection.
   */
  requestFailed(transport: Transport, messages: Message[], error: BayouError): void {
    if (transport !== this.active || this.machine.state !== 'connected') {
      this.transportFailed(transport, error);
      return;
    }
    this.dispatcher.failLater(messages, error, this.resendBackoff.next());
  }

  /** The active transport received a frame: the link is alive. */
  heard(transport: Transport): void {
    if (transport !== this.active) return;
    this.lastHeard = Date.now();
    this.renewedAt = 0;
  }

  /** The session id, once handshaken. */
  get session(): string | null {
    return this.clientId;
  }

  // ── establishing a connection ────────────────────────────────────────────────

  /** Tries each candidate transport in turn; on total failure retries after a backoff delay. */
  private async attempt(epoch: number): Promise<void> {
    if (epoch !== this.epoch) return;
    const candidates = this.selector.candidates();
    if (candidates.length === 0) {
      return this.stop(new BayouError(ErrorCodes.NO_TRANSPORT, 'no transport in common with the server'));
    }
    const failedFirst: string[] = [];
    let refusal: Message | null = null;
    for (const factory of candidates) {
      const transport = factory.create(this.context);
      try {
        await transport.open(this.options.wsOpenTimeout);
        if (epoch !== this.epoch) return transport.close();
        const newSession = await this.establish(transport, epoch);
        if (epoch !== this.epoch) return transport.close();
        this.selector.demote(failedFirst);
        return this.activate(transport, newSession);
      } catch (err) {
        transport.close();
        this.dispatcher.fail(transport, asTransportError(err), true);
        if (epoch !== this.epoch) return;
        if (isStop(err)) return this.stop(err);
        if (err instanceof Refusal) {
          refusal = err.reply;
          break;
        }
        failedFirst.push(factory.name);
      }
    }
    const delay = Math.max(refusal?.advice?.interval ?? 0, this.reconnectBackoff.next());
    this.timer = setTimeout(() => this.attempt(epoch), delay);
  }

  /** Handshakes when there is no session, then sends the first connect; true for a new session. */
  private async establish(transport: Transport, epoch: number): Promise<boolean> {
    if (this.clientId === null) await this.handshake(transport, epoch);
    let reply = await this.sendConnect(transport, 0, 'resume');
    if (
      !reply.successful &&
      reconnectAdvice(reply) === 'handshake' &&
      !this.unannounced &&
      epoch === this.epoch
    ) {
      this.clientId = null;
      await this.handshake(transport, epoch);
      reply = await this.sendConnect(transport, 0, 'resume');
    }
    if (!reply.successful) {
      if (reconnectAdvice(reply) === 'none') throw stopError(reply);
      if (reconnectAdvice(reply) === 'handshake') this.clientId = null;
      throw new Refusal(reply);
    }
    this.takeAdvice(reply.advice);
    const newSession = this.unannounced;
    this.unannounced = false;
    return newSession;
  }

  private async handshake(transport: Transport, epoch: number): Promise<void> {
    const h = this.options.handshake;
    let ext = typeof h === 'function' ? await h() : h;
    const token = await this.tokens.forHandshake();
    if (token !== undefined) ext = { ...ext, auth: { ...(ext?.auth as object | undefined), token } };
    if (epoch !== this.epoch) throw new BayouError(ErrorCodes.DISCONNECTED, 'stopped');
    const message: Message = {
      channel: META_HANDSHAKE,
      version: BAYEUX_VERSION,
      minimumVersion: BAYEUX_VERSION,
      supportedConnectionTypes: this.selector.names,
      advice: { timeout: 60000, interval: 0 },
    };
    if (ext) message.ext = { ...ext };
    const reply = await this.dispatcher.request(transport, message, this.options.connectTimeout);
    if (!reply.successful || typeof reply.clientId !== 'string') {
      throw isFinalHandshakeRefusal(reply) ? stopError(reply) : new Refusal(reply);
    }
    this.clientId = reply.clientId;
    this.unannounced = true;
    this.selector.serverOffers(reply.supportedConnectionTypes);
    this.takeAdvice(reply.advice);
    if (!this.selector.offers(transport.name)) {
      throw new BayouError(ErrorCodes.NO_TRANSPORT, `the server does not offer ${transport.name}`);
    }
  }

  /**
   * One `/meta/connect`; `hold` overrides the server's hold timeout (0: answer at once);
   * `mark` tells the ack extension how to number it.
   */
  private sendConnect(transport: Transport, hold?: number, mark?: AckMark): Promise<Message> {
    const message: Message = {
      channel: META_CONNECT,
      clientId: this.clientId ?? '',
      connectionType: transport.name,
    };
    if (hold !== undefined) message.advice = { timeout: hold };
    if (mark !== undefined) message.ext = { ack: mark };
    // A refreshed token goes with every connect until one of them succeeds.
    const token = this.tokens.pending;
    if (token !== null) message.ext = { ...message.ext, auth: { token } };
    const wait = (hold ?? this.advice.timeout) + this.options.connectTimeout;
    const reply = this.dispatcher.request(transport, message, wait);
    if (token === null) return reply;
    return reply.then((r) => {
      if (r.successful) this.tokens.accepted(token);
      return r;
    });
  }

  /** A refreshed token is pending: a held connect is renewed to carry it now. */
  private renewForToken(): void {
    if (this.machine.state !== 'connected' || !this.connectInFlight) return; // the next one carries it
    this.connectTurn++;
    this.connectLoop(this.epoch, 'skip');
  }

  private takeAdvice(advice: Advice | undefined): void {
    if (!advice) return;
    if (typeof advice.timeout === 'number' && advice.timeout >= 0) this.advice.timeout = advice.timeout;
    if (typeof advice.interval === 'number' && advice.interval >= 0) this.advice.interval = advice.interval;
  }

  private activate(transport: Transport, newSession: boolean): void {
    this.setActive(transport);
    this.reconnectBackoff.reset();
    this.resendBackoff.reset();
    this.machine.set('connected');
    this.hooks.onConnected(newSession);
    this.tokens.start();
    for (const w of this.waiters.splice(0)) w.resolve();
    this.scheduleConnect(this.epoch, this.advice.interval);
    this.scheduleProbe(this.epoch);
  }

  private setActive(transport: Transport): void {
    const previous = this.active?.name ?? null;
    this.active = transport;
    this.replies = 0;
    this.lastHeard = Date.now();
    this.renewedAt = 0;
    this.watch(this.epoch);
    if (previous !== transport.name) this.hooks.onTransport(transport.name, previous);
  }

  // ── the connect loop ─────────────────────────────────────────────────────────

  /**
   * Schedules the next `/meta/connect`. With no delay (the usual `interval: 0`) it runs as a
   * microtask, not a timer: background tabs throttle timers (Chrome: to once a minute), and
   * a session whose next connect waits that long expires on the server.
   */
  private scheduleConnect(epoch: number, delay: number): void {
    clearTimeout(this.timer);
    this.connectInFlight = false;
    const turn = ++this.connectTurn;
    const run = (): void => {
      if (turn === this.connectTurn) this.connectLoop(epoch);
    };
    if (delay > 0) this.timer = setTimeout(run, delay);
    else queueMicrotask(run);
  }

  private async connectLoop(epoch: number, mark?: AckMark): Promise<void> {
    const transport = this.active;
    if (!transport || epoch !== this.epoch) return;
    const turn = this.connectTurn;
    this.connectInFlight = true;
    let reply: Message;
    try {
      reply = await this.sendConnect(transport, undefined, mark);
    } catch {
      return; // transportFailed() has already taken over.
    }
    // A reply from a transport we have moved away from ends its loop.
    if (epoch !== this.epoch || transport !== this.active) return;
    this.takeAdvice(reply.advice);
    // A connect superseded by a renewed one: the renewed one carries the loop on.
    if (turn !== this.connectTurn) return;
    // A success advising a handshake ended the session (its token expired): handshake below.
    if (reply.successful && reply.advice?.reconnect !== 'handshake') {
      // The preferred transport answered two connects in a row: it works, so later probes
      // (should it fail again) start from short delays. Replies on a fallback do not count.
      if (++this.replies === 2 && !this.selector.better(transport.name)) this.probeBackoff.reset();
      return this.scheduleConnect(epoch, this.advice.interval);
    }
    const advice = reconnectAdvice(reply);
    if (advice === 'none') return this.stop(stopError(reply));
    if (advice === 'handshake') this.clientId = null;
    this.lost(reply.advice?.interval ?? this.reconnectBackoff.next());
  }

  /**
   * Renews the held connect so that it reports the numbered frames received (the ack
   * extension asks). Only on a live WebSocket with a connect held: otherwise the next
   * connect of the loop carries the report anyway.
   */
  reportFrames(): void {
    const transport = this.active;
    if (this.machine.state !== 'connected' || transport?.name !== 'websocket' || !this.connectInFlight)
      return;
    this.connectTurn++;
    this.connectLoop(this.epoch);
  }

  // ── dead-link detection ──────────────────────────────────────────────────────

  /**
   * The WebSocket watchdog. After `deadLinkTimeout / 2` ms without a frame it renews the
   * held connect (a new `/meta/connect` supersedes it, so the server answers the old one
   * at once); if still nothing arrives within `0.4 · deadLinkTimeout` ms, the link is
   * dead. So a silent link is given up within 90% of `deadLinkTimeout`, leaving the rest
   * for the reconnect. A timer that fires late (a throttled background tab) only renews:
   * a link is declared dead only after a renewal went unanswered.
   */
  private watch(epoch: number): void {
    clearTimeout(this.watchTimer);
    const transport = this.active;
    const limit = this.options.deadLinkTimeout;
    if (!transport || epoch !== this.epoch || !this.watched(transport)) return;
    const now = Date.now();
    if (this.renewedAt === 0 && now - this.lastHeard >= limit / 2) {
      this.renewedAt = now;
      if (this.connectInFlight) {
        this.connectTurn++;
        this.connectLoop(epoch, 'skip');
      }
    } else if (this.renewedAt !== 0 && now - this.renewedAt >= limit * 0.4) {
      // Set aside: reconnect on the next transport; a probe brings it back after a growing delay.
      this.selector.demote([transport.name]);
      this.lost(0);
      return;
    }
    const due = this.renewedAt === 0 ? this.lastHeard + limit / 2 : this.renewedAt + limit * 0.4;
    this.watchTimer = setTimeout(() => this.watch(epoch), Math.max(1, due - now));
  }

  /** Whether the watchdog looks after `transport`: a WebSocket, unless turned off. */
  private watched(transport: Transport): boolean {
    return transport.name === 'websocket' && this.options.deadLinkTimeout > 0;
  }

  /** The active connection is gone: reconnect after `delay` ms, keeping the session if we can. */
  private lost(delay: number): void {
    const transport = this.active;
    const epoch = ++this.epoch;
    this.clearTimers();
    this.active = null;
    if (transport) {
      transport.close();
      this.dispatcher.fail(transport, new BayouError(ErrorCodes.TRANSPORT, 'connection lost'), true);
    }
    this.closeProbe();
    if (this.machine.state === 'connected') this.machine.set('reconnecting');
    this.timer = setTimeout(() => this.attempt(epoch), delay);
  }

  // ── moving back to a preferred transport ─────────────────────────────────────

  /** While on a fallback transport, tries the preferred one again after a growing delay. */
  private scheduleProbe(epoch: number): void {
    const active = this.active;
    if (!active || this.probeTimer !== undefined || this.probing) return;
    const better = this.selector.better(active.name);
    if (!better) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      this.probe(better, epoch);
    }, this.probeBackoff.next());
  }

  /**
   * Opens the preferred transport beside the active one and sends a `/meta/connect` for the
   * same session over it. Once that is answered the session's delivery has moved (the
   * server ends the old held connect); the old transport only drains what was in flight,
   * so no message is lost or delivered twice.
   */
  private async probe(factory: TransportFactory, epoch: number): Promise<void> {
    const transport = factory.create(this.context);
    this.probing = transport;
    try {
      await transport.open(this.options.wsOpenTimeout);
      if (epoch !== this.epoch) throw new Error('stale');
      const reply = await this.sendConnect(transport, 0, 'probe');
      if (epoch !== this.epoch || !reply.successful) throw new Error('refused');
      this.probing = null;
      const old = this.active;
      this.selector.promote(factory.name);
      this.takeAdvice(reply.advice);
      this.setActive(transport);
      if (old) {
        // The server answered the connect held on the old transport: its reply (the next
        // batch, with acks) is on its way. The next connect reports what was received, so
        // it waits for that reply, or for the old transport to fail.
        await new Promise<void>((resolve) => {
          old.drain(resolve);
          setTimeout(resolve, this.options.connectTimeout);
        });
        if (epoch !== this.epoch || this.active !== transport) return;
      }
      this.scheduleConnect(epoch, this.advice.interval);
    } catch {
      if (this.probing === transport) this.probing = null;
      transport.close();
      this.dispatcher.fail(transport, new BayouError(ErrorCodes.TRANSPORT, 'probe failed'), true);
      if (epoch === this.epoch) this.scheduleProbe(epoch);
    }
  }

  private closeProbe(): void {
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    const probing = this.probing;
    this.probing = null;
    probing?.close();
  }

  // ── stopping ─────────────────────────────────────────────────────────────────

  private clearTimers(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.watchTimer);
    this.watchTimer = undefined;
    this.connectInFlight = false;
    this.tokens.stop();
  }

  /** Stops for good: nothing is retried, every pending promise rejects with `error`. */
  private stop(error: BayouError): void {
    this.epoch++;
    this.clearTimers();
    this.closeProbe();
    const transport = this.active;
    this.active = null;
    this.clientId = null;
    this.selector.reset();
    transport?.close();
    this.dispatcher.fail(null, error, false);
    this.probeBackoff.reset();
    this.reconnectBackoff.reset();
    if (this.machine.state !== 'disconnected') this.machine.set('disconnected');
    this.hooks.onStopped(error);
    for (const w of this.waiters.splice(0)) w.reject(error);
  }
}
