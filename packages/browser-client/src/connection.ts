/**
 * The connection: the `/meta/connect` loop, reconnection with backoff, and the choice of
 * transport — WebSocket first, then streaming, then long-polling, and back to WebSocket
 * when a background probe shows it works again. All state changes go through
 * the `StateMachine`; every asynchronous continuation checks `epoch` so that work started
 * before a reconnect or a stop cannot act after it. The WebSocket watchdog and the probe
 * back to a preferred transport live in `link-watchdog.ts` and `transport-probe.ts`.
 */
import { META_DISCONNECT } from '@bayou/protocol';
import type { AckMark } from './ack.js';
import { asTransportError, goesOn, isStop, Refusal, reconnectAdvice, stopError } from './advice.js';
import { Backoff, Pace } from './backoff.js';
import type { Dispatcher } from './dispatcher.js';
import { BayouError, ErrorCodes } from './errors.js';
import { LinkWatchdog } from './link-watchdog.js';
import type { ResolvedOptions } from './options.js';
import { BayeuxSession } from './session.js';
import { type ConnectionState, StateMachine } from './state.js';
import { TokenRefresh } from './token-refresh.js';
import { TransportProbe } from './transport-probe.js';
import { type TransportReason, TransportSelector } from './transport-selector.js';
import type { Transport, TransportContext } from './transports/transport.js';
import type { Message } from './types.js';

export interface ConnectionHooks {
  onState(next: ConnectionState, previous: ConnectionState): void;
  onTransport(next: string, previous: string | null, reason: TransportReason): void;
  /** Connected (again): send what waited; `newSession` after every successful handshake. */
  onConnected(newSession: boolean): void;
  /** The client stopped for good (until the next `connect()`). */
  onStopped(error: BayouError): void;
  /** Every transport failed this attempt (the error with an HTTP status, if one had it); retrying. */
  onAttemptFailed(error: BayouError): void;
}

type Timer = ReturnType<typeof setTimeout>;

export class Connection {
  private readonly machine: StateMachine;
  private readonly options: ResolvedOptions;
  private readonly dispatcher: Dispatcher;
  private readonly hooks: ConnectionHooks;
  private readonly context: TransportContext;
  /** The one backoff of every reconnect (see `Pace`). */
  private readonly pace: Pace;
  private readonly probeBackoff: Backoff;
  /** Frames heard on the active transport (a stream that carried some ended usefully). */
  private frames = 0;
  private readonly probe: TransportProbe;
  private readonly watchdog: LinkWatchdog;
  /** Delays before the messages of a request that failed alone are sent again. */
  private readonly resendBackoff: Backoff;
  /** Bumped on every reconnect and stop; stale continuations compare and bail out. */
  private epoch = 0;
  private active: Transport | null = null;
  private readonly selector: TransportSelector;
  private timer: Timer | undefined;
  /** Bumped by every `scheduleConnect`, so only the latest scheduled connect runs. */
  private connectTurn = 0;
  /** A `/meta/connect` of the loop waits for its reply. */
  private connectInFlight = false;
  /** Successful connect replies on the active transport since it became active. */
  private replies = 0;
  private waiters: { resolve(): void; reject(error: BayouError): void }[] = [];
  private readonly tokens: TokenRefresh;
  private readonly bayeux: BayeuxSession;

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
    this.pace = new Pace(options.minReconnectDelay, options.maxReconnectDelay);
    this.probeBackoff = new Backoff(options.minProbeDelay, options.maxProbeDelay);
    this.resendBackoff = new Backoff(options.minReconnectDelay, options.maxReconnectDelay);
    this.tokens = new TokenRefresh(options.token, options.tokenRefreshMargin, () => this.renew('skip'));
    this.bayeux = new BayeuxSession(options, dispatcher, this.selector, this.tokens);
    this.watchdog = new LinkWatchdog(options.deadLinkTimeout, {
      renew: () => this.renew('skip'),
      dead: () => {
        // Set aside: reconnect on the next transport; a probe brings it back after a growing delay.
        if (this.active) this.selector.demote([this.active.name]);
        this.lost(this.retryDelay());
      },
    });
    const connection = this;
    const host = {
      get epoch() {
        return connection.epoch;
      },
      get active() {
        return connection.active;
      },
      probeConnect: (transport: Transport) => this.bayeux.connect(transport, 0, 'probe'),
      moved: (transport: Transport, reply: Message) => {
        this.bayeux.takeAdvice(reply.advice);
        this.setActive(transport, 'probe');
      },
      carryOn: (epoch: number) => this.next(epoch),
    };
    this.probe = new TransportProbe(host, this.selector, this.probeBackoff, dispatcher, context, options);
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
    const clientId = this.bayeux.clientId;
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

  /** A reply on `transport` did not come in time: an open, silent WebSocket is set aside, then as `transportFailed`. */
  timedOut(transport: Transport, error: BayouError): void {
    if (transport === this.active && this.watched(transport)) this.selector.demote([transport.name]);
    this.transportFailed(transport, error);
  }

  /**
   * The transport failed, or some reply on it did not come in time: reconnect after the
   * backoff's delay (a WebSocket cut, a stream error); a proxy buffering a stream sets it aside.
   */
  transportFailed(transport: Transport, error: BayouError): void {
    if (transport === this.active) {
      if (transport.buffered) this.selector.demote([transport.name], 'buffered');
      this.lost(this.retryDelay());
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
   * balancer would send to the same dead node every time. So the messages alone go again
   * after a backoff delay; a connect that fails still ends the connection.
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
    this.frames++;
    this.watchdog.heard();
  }

  /** The session id, once handshaken. */
  get session(): string | null {
    return this.bayeux.clientId;
  }

  /** Tries each candidate transport in turn; on total failure retries after a backoff delay. */
  private async attempt(epoch: number): Promise<void> {
    if (epoch !== this.epoch) return;
    const candidates = this.selector.candidates();
    if (candidates.length === 0) {
      return this.stop(new BayouError(ErrorCodes.NO_TRANSPORT, 'no transport in common with the server'));
    }
    const failedFirst: [string, TransportReason][] = [];
    let refusal: Message | null = null;
    let reason: BayouError | null = null;
    for (const factory of candidates) {
      const transport = factory.create(this.context);
      try {
        await transport.open(this.pace.open(this.options));
        if (epoch !== this.epoch) return transport.close();
        const newSession = await this.bayeux.establish(transport, () => epoch === this.epoch);
        if (epoch !== this.epoch) return transport.close();
        for (const [name, reason] of failedFirst) this.selector.demote([name], reason);
        return this.activate(transport, newSession);
      } catch (err) {
        transport.close();
        const error = asTransportError(err);
        this.dispatcher.fail(transport, error, true);
        if (epoch !== this.epoch) return;
        if (reason === null || reason.status === null) reason = error;
        if (isStop(err)) return this.stop(err);
        if (err instanceof Refusal) {
          refusal = err.reply;
          break;
        }
        failedFirst.push([factory.name, transport.buffered ? 'buffered' : 'failed']);
      }
    }
    if (reason && !refusal) this.hooks.onAttemptFailed(reason);
    const delay = this.pace.next(refusal?.advice?.interval ?? reason?.retryAfter);
    this.timer = setTimeout(() => this.attempt(epoch), delay);
  }

  /**
   * Renews the held connect (or stream): a new `/meta/connect` supersedes it, so the server
   * answers the old one at once. For a refreshed token (carried now), the watchdog (a silent
   * link answers or is dead), numbered frames to report (`mark` undefined). Without a held
   * connect the next one of the loop does it anyway.
   */
  private renew(mark?: AckMark): void {
    if (this.machine.state !== 'connected' || !this.connectInFlight) return;
    this.connectTurn++;
    this.connectLoop(this.epoch, mark);
  }

  private activate(transport: Transport, newSession: boolean): void {
    this.setActive(transport, this.selector.reason(transport.name));
    this.pace.up();
    this.resendBackoff.reset();
    this.machine.set('connected');
    this.hooks.onConnected(newSession);
    this.tokens.start();
    for (const w of this.waiters.splice(0)) w.resolve();
    this.next(this.epoch);
    this.probe.schedule(this.epoch);
  }

  private setActive(transport: Transport, reason: TransportReason): void {
    const previous = this.active?.name ?? null;
    this.active = transport;
    this.replies = 0;
    this.watchdog.stop();
    // A heartbeat session's WebSocket hears `[]` every `heartbeat` ms: a link is silent
    // only after one is missed by a quarter of the interval.
    this.watchdog.limit = Math.max(this.options.deadLinkTimeout, this.bayeux.heartbeat * 2.5);
    if (this.watched(transport)) this.watchdog.start();
    if (previous !== transport.name) this.hooks.onTransport(transport.name, previous, reason);
  }

  /**
   * A connect was answered: the next one goes after the advised interval. On a stream,
   * which stays open after the reply, once the server has ended it (a recycle).
   */
  private next(epoch: number): void {
    const transport = this.active;
    const turn = this.connectTurn;
    const go = (delay = this.bayeux.advice.interval): void => {
      if (epoch !== this.epoch || turn !== this.connectTurn || transport !== this.active) return;
      this.scheduleConnect(epoch, delay);
    };
    if (!transport?.streamEnd) {
      go();
      return;
    }
    // The stream stands for a held connect: a renewal (a refreshed token) opens the next one.
    // One that ended early (nothing carried, link not stable) is followed after the backoff.
    this.connectInFlight = true;
    const frames = this.frames;
    transport.streamEnd((last) => {
      const early = this.frames === frames && !this.pace.stable;
      if (!last || goesOn(last)) go(early ? this.pace.next(this.bayeux.advice.interval) : undefined);
      else if (epoch === this.epoch && turn === this.connectTurn) this.refused(last);
    });
  }

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
      reply = await this.bayeux.connect(transport, undefined, mark);
    } catch {
      return; // transportFailed() has already taken over.
    }
    // A reply from a transport we have moved away from ends its loop.
    if (epoch !== this.epoch || transport !== this.active) return;
    this.bayeux.takeAdvice(reply.advice);
    // A connect superseded by a renewed one: the renewed one carries the loop on.
    if (turn !== this.connectTurn) return;
    if (!goesOn(reply)) return this.refused(reply);
    this.pace.up();
    // The preferred transport answered two connects in a row: it works, so later probes
    // (should it fail again) start from short delays. Replies on a fallback do not count.
    if (++this.replies === 2 && !this.selector.better(transport.name)) this.probeBackoff.reset();
    this.next(epoch);
  }

  /** A connect was refused, or its reply ended the session: reconnect, handshake or stop. */
  private refused(reply: Message): void {
    const advice = reconnectAdvice(reply);
    if (advice === 'none') this.stop(stopError(reply));
    else {
      if (advice === 'handshake') this.bayeux.clientId = null;
      this.lost(this.pace.next(reply.advice?.interval));
    }
  }

  /** The ack extension has numbered frames to report: on a live WebSocket, at once. */
  reportFrames(): void {
    if (this.active?.name === 'websocket') this.renew();
  }

  /** Whether the watchdog looks after `transport`: a WebSocket, unless turned off. */
  private watched(transport: Transport): boolean {
    return transport.name === 'websocket' && this.options.deadLinkTimeout > 0;
  }

  /** After the active transport failed: at once if set aside for another one, else the backoff. */
  private retryDelay(): number {
    return this.selector.candidates()[0]?.name !== this.active?.name ? 0 : this.pace.next();
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
    this.probe.close();
    if (this.machine.state === 'connected') this.machine.set('reconnecting');
    this.timer = setTimeout(() => this.attempt(epoch), delay);
  }

  private clearTimers(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.watchdog.stop();
    this.connectInFlight = false;
    this.tokens.stop();
  }

  /** Stops for good: nothing is retried, every pending promise rejects with `error`. */
  private stop(error: BayouError): void {
    this.epoch++;
    this.clearTimers();
    this.probe.close();
    const transport = this.active;
    this.active = null;
    this.bayeux.clientId = null;
    this.selector.reset();
    transport?.close();
    this.dispatcher.fail(null, error, false);
    this.probeBackoff.reset();
    this.pace.reset();
    if (this.machine.state !== 'disconnected') this.machine.set('disconnected');
    this.hooks.onStopped(error);
    for (const w of this.waiters.splice(0)) w.reject(error);
  }
}
