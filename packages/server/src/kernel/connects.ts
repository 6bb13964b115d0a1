/**
 * `/meta/connect` as the server lives it: binding a session to the carrier a connect came
 * on, holding the connect until there is something to send or its `timeout`, answering a
 * held connect (with what is queued, on a carrier that does not push or for sessions whose
 * deliveries travel only in connect replies), and letting go when a carrier or a request
 * goes away. Long-polls held per browser are capped here (`multiple-clients` advice).
 *
 * Carriers are told apart by what their kind can do (`session/carrier.ts`), never by name:
 * the kind of the carrier a connect came on (`ctx.kind`) and the kind its `connectionType`
 * names, which differ for a connect sent aside of its stream (Faye's EventSource) and for
 * the polls of a stream relayed from another node (`cluster/stream-relay.ts`).
 */
import { META_CONNECT, type Message } from '@bayou/protocol';
import { type BatchContext, routeReply } from '../bayeux/batch-context.js';
import type { ExtensionPipeline } from '../bayeux/extensions.js';
import type { ResolvedOptions } from '../options.js';
import { BrowserSlots } from '../session/browser-slots.js';
import type { Carrier, CarrierKind, ConnectionTypes } from '../session/carrier.js';
import type { Outbound } from '../session/outbound.js';
import type { Session } from '../session/session.js';
import type { HeldConnect, PendingPoll } from '../session/session-lifecycle.js';
import type { SessionRegistry } from '../session/session-registry.js';
import { overHttp2 } from '../transports/request-info.js';
import { STREAM_FRAMING } from '../transports/stream-link.js';

export type ConnectOptions = Pick<
  ResolvedOptions,
  | 'timeout'
  | 'interval'
  | 'maxInterval'
  | 'maxSessionsPerBrowser'
  | 'multiSessionInterval'
  | 'streamMaxBytes'
  | 'heartbeatTimeout'
  | 'heartbeatInterval'
>;

export class Connects {
  /** The usual connect advice, serialized once. */
  readonly advice: string;
  private readonly multipleClientsAdvice: string;
  private readonly adviceFields: Record<string, unknown>;
  /** The advice of a heartbeat session on a carrier that pings: `timeout` is `heartbeatTimeout`. */
  private readonly heartbeatAdvice: string;
  private readonly heartbeatFields: Record<string, unknown>;
  private readonly browserPolls: BrowserSlots;
  /** The advice for a connect sent aside of its stream (Faye's EventSource) while one is open, and while none is. */
  private readonly asideAdvice: string;
  private readonly asideGapAdvice: string;
  /** The largest frame of a stream relayed from another node: `streamMaxBytes` less a stream's padding and framing. */
  private readonly relayedFrameBytes: number;
  /**
   * How long a heartbeat session whose connect was answered on its open WebSocket waits for
   * the next one: `maxInterval` and two heartbeats. The heartbeat proves the link meanwhile
   * (a silent socket is closed within two, and then `maxInterval` counts from the close),
   * so a client busy for longer than `maxInterval` (a burst to read first) keeps its session.
   */
  private readonly beatingInterval: number;

  constructor(
    private readonly options: ConnectOptions,
    private readonly outbound: Outbound,
    private readonly extensions: ExtensionPipeline,
    /** The kind a connect's `connectionType` names (`transports/carrier-kinds.ts`). */
    private readonly connectionTypes: ConnectionTypes,
    /** Where every transition of a session goes (it files the session's deadline). */
    private readonly sessions: Pick<SessionRegistry, 'transition'>,
  ) {
    this.adviceFields = { reconnect: 'retry', interval: options.interval, timeout: options.timeout };
    this.advice = JSON.stringify(this.adviceFields);
    this.heartbeatFields = { ...this.adviceFields, timeout: options.heartbeatTimeout };
    this.heartbeatAdvice = JSON.stringify(this.heartbeatFields);
    this.beatingInterval = options.maxInterval + 2 * options.heartbeatInterval;
    this.multipleClientsAdvice = JSON.stringify({
      reconnect: 'retry',
      interval: options.multiSessionInterval,
      'multiple-clients': true,
    });
    this.browserPolls = new BrowserSlots(options.maxSessionsPerBrowser);
    this.relayedFrameBytes = options.streamMaxBytes - STREAM_FRAMING;
    this.asideAdvice = JSON.stringify({ reconnect: 'retry', interval: options.timeout, timeout: 0 });
    this.asideGapAdvice = JSON.stringify({
      reconnect: 'retry',
      interval: Math.min(options.timeout, Math.floor(options.maxInterval / 2)),
      timeout: 0,
    });
  }

  /** A handshake on a carrier that pushes binds the new session to it, so its replies keep their order. */
  bindHandshake(session: Session, ctx: BatchContext): void {
    if (ctx.carrier === null) return;
    this.sessions.transition(
      session,
      { type: 'bind-carrier', carrier: ctx.carrier, held: null },
      Date.now(),
      this.waitFor(session, ctx.carrier),
    );
    ctx.bound.push(session);
  }

  connect(session: Session, message: Message, ctx: BatchContext): void {
    const older = session.carrier;
    this.connectOn(session, message, ctx);
    // A stream this connect took the session from (a newer stream relayed from another
    // node, a long-poll) ends now: nothing would ever be written into it again.
    if (older?.kind.keepsSession && session.carrier !== older) older.end(1000, 'superseded');
  }

  private connectOn(session: Session, message: Message, ctx: BatchContext): void {
    const named = this.connectionTypes((message as { connectionType?: unknown }).connectionType);
    // A connect on a POST naming a stream: sent aside of it, or a relayed stream's poll.
    const forStream = ctx.carrier === null && named?.keepsSession === true ? named : null;
    if (forStream !== null && !forStream.opensWithConnect) {
      this.asideConnect(session, message, ctx, forStream);
      return;
    }
    if (forStream !== null && session.carrier?.kind.keepsSession === true && !zeroTimeout(message)) {
      // A relayed stream's poll (cluster/stream-relay.ts) while a stream of the session is
      // open here: that one is newer (the relay's opening connect let go of any older), so
      // the relay is told to end.
      routeReply(ctx, session, connectReplyJson(message.id, session.id, RELAY_ENDED));
      return;
    }
    // A new connect supersedes a held one: that one is answered on its own carrier, with
    // no deliveries — they go with this connect.
    if (session.held !== null) this.complete(session, undefined, false);
    // A stream relayed from another node long-polls here, yet the session streams.
    session.carriedBy(forStream ?? ctx.kind);
    const first = !session.connected;
    session.connected = true;
    const clientTimeout = (message.advice as { timeout?: unknown } | undefined)?.timeout;
    // A stream's opening connect is answered at once, ahead of what is queued.
    const stream = ctx.carrier?.kind.keepsSession === true;
    const beats = pinged(session, ctx.carrier);
    let advice: string | null =
      first || clientTimeout === 0 || stream ? (beats ? this.heartbeatAdvice : this.advice) : null;
    // The browser's slot this connect holds, if it counts: a long-poll of the browser's own
    // over HTTP/1.1 (over HTTP/2 a browser's long-polls share one connection: no per-origin
    // limit to spare), not a relayed stream's.
    const slot =
      advice === null && ctx.kind.browserBound && forStream === null && !overHttp2(ctx.request)
        ? ctx.browserId
        : null;
    if (slot !== null && !this.browserPolls.acquire(slot)) advice = this.multipleClientsAdvice;
    const now = Date.now();
    if (advice !== null) {
      if (ctx.carrier !== null) this.bindCarrier(session, ctx, ctx.carrier, null, now);
      else this.sessions.transition(session, { type: 'detach' }, now, this.options.maxInterval);
      // A connect answered at once (the first, one with `advice.timeout: 0`, a browser past
      // its long-poll slots) carries what waits when deliveries travel only in connect
      // replies: what an acknowledgement put back, what was queued while the client was away.
      // A stream's opening reply goes ahead of what is queued, which follows as frames.
      const carry = !stream && session.deliveryMode === 'connect-reply' && session.queue.length > 0;
      const messages = carry ? session.drain() : [];
      const ext = this.extensions.connectExt(session, messages, !carry);
      for (const m of messages) ctx.replies.push(m);
      routeReply(ctx, session, connectReplyJson(message.id, session.id, advice, ext), stream ? 0 : undefined);
      this.flushSoon(session);
      return;
    }
    // Only the id is kept while the connect is held: the reply is built when it completes.
    const held = {
      id: message.id,
      deadline: now + (beats ? this.options.heartbeatTimeout : this.options.timeout),
      poll: ctx.poll,
      browserId: slot,
    };
    if (ctx.carrier !== null) this.bindCarrier(session, ctx, ctx.carrier, held, now);
    else {
      this.sessions.transition(session, { type: 'hold-poll', held }, now, this.options.maxInterval);
      ctx.held = true;
    }
    // A stream relayed from another node, reopened after a cut: its resent frames leave now.
    if (this.outbound.resending(session)) session.flushSoon();
    // Messages already waiting (queued while the client was away) leave now.
    this.flushSoon(session);
  }

  /**
   * Answers the held connect of `session`: with everything queued when on long-polling or
   * when deliveries travel only in connect replies (unless `withMessages` is false). With
   * `error`, the reply is unsuccessful (the session ended): every client follows the
   * advice of a failed connect, while CometD refuses `handshake` advice on a successful one.
   */
  complete(session: Session, advice?: Record<string, unknown>, withMessages = true, error?: string): void {
    const beats = pinged(session, session.carrier);
    const held = this.sessions.transition(session, { type: 'release' }, Date.now(), this.waitOf(session));
    if (held === null) return;
    if (held.browserId !== null) this.browserPolls.release(held.browserId);
    const adviceJson =
      advice === undefined
        ? beats
          ? this.heartbeatAdvice
          : this.advice
        : JSON.stringify({ ...(beats ? this.heartbeatFields : this.adviceFields), ...advice });
    // The carrier the connect is held on: its long-poll, or the carrier that pushes.
    const on = held.poll ?? session.carrier;
    if (on === null) return;
    if (on.kind.pushes && session.deliveryMode !== 'connect-reply') {
      // A carrier that pushes: the reply follows whatever was queued before it.
      session.enqueue(connectReplyJson(held.id, session.id, adviceJson, undefined, error));
      return;
    }
    if (!on.kind.pushes && session.deliveryMode === 'numbered') {
      // A stream relayed from another node: its frames, numbered and bounded here, then the reply.
      const frames = this.outbound.relayedFrames(session, this.relayedFrameBytes, withMessages);
      const ext = this.extensions.connectExt(session, [], true);
      frames.push(connectReplyJson(held.id, session.id, adviceJson, ext, error));
      this.outbound.answer(session, on, frames);
      return;
    }
    const messages = withMessages ? session.drain() : [];
    const ext = this.extensions.connectExt(session, messages, false);
    messages.push(connectReplyJson(held.id, session.id, adviceJson, ext, error));
    this.outbound.answer(session, on, messages);
  }

  /**
   * A connect sent aside of its stream, on a POST, while the stream (opened by a request
   * naming the session, not by a connect: Faye's EventSource) carries the deliveries:
   * answered at once (advice `timeout: 0`, the next connect after `interval`, only to say
   * the client lives). While no stream is open (not yet, or between two) it carries what is
   * queued, as a long-poll answered at once would, and the client is asked back before the
   * session could expire.
   */
  private asideConnect(session: Session, message: Message, ctx: BatchContext, named: CarrierKind): void {
    session.connected = true;
    // A stream of this session relayed from another node holds a connect here.
    const streaming =
      session.carrier?.kind.keepsSession === true ||
      (session.held?.poll != null && session.carrierKind.keepsSession);
    let messages: string[] = [];
    if (!streaming) {
      if (session.held !== null) this.complete(session, undefined, false);
      session.carriedBy(named);
      this.sessions.transition(session, { type: 'detach' }, Date.now(), this.options.maxInterval);
      // What is queued rides along in the POST's answer (`finishPoll`), which puts it back if
      // its client went away meanwhile; numbered ones (ack) are drained here, with their batch.
      if (session.deliveryMode === 'numbered' || (session.deliveryMode === 'push' && ctx.poll === null))
        messages = session.drain();
    }
    const ext = this.extensions.connectExt(session, messages, messages.length === 0);
    for (const m of messages) ctx.replies.push(m);
    const advice = streaming ? this.asideAdvice : this.asideGapAdvice;
    routeReply(ctx, session, connectReplyJson(message.id, session.id, advice, ext));
  }

  /** A stream opened without a connect (an EventSource request) carries `session` from now on. */
  bindStream(session: Session, link: Carrier): void {
    if (session.held !== null) this.complete(session, undefined, false);
    this.sessions.transition(
      session,
      { type: 'bind-carrier', carrier: link, held: null },
      Date.now(),
      this.options.maxInterval,
    );
    session.carriedBy(link.kind);
    this.flushSoon(session);
  }

  /** The carrier of `session` closed: keep the session until it expires. */
  carrierClosed(session: Session, link: Carrier): void {
    if (session.carrier !== link) return;
    this.sessions.transition(session, { type: 'carrier-closed' }, Date.now(), this.options.maxInterval);
  }

  /** The client went away while its long-poll was held; queued messages wait for the next one. */
  pollAborted(session: Session, poll: PendingPoll): void {
    if (session.held?.poll !== poll) return;
    const held = this.sessions.transition(session, { type: 'release' }, Date.now(), this.options.maxInterval);
    if (held?.browserId) this.browserPolls.release(held.browserId);
  }

  private bindCarrier(
    session: Session,
    ctx: BatchContext,
    carrier: Carrier,
    held: HeldConnect | null,
    now: number,
  ): void {
    const fresh = session.carrier !== carrier;
    this.sessions.transition(
      session,
      { type: 'bind-carrier', carrier, held },
      now,
      this.waitFor(session, carrier),
    );
    if (fresh) ctx.bound.push(session);
  }

  /**
   * How long `session`, its connect answered on the carrier it has now, waits for its next
   * connect before it expires: `maxInterval`, or `maxInterval` and two heartbeats for a
   * connected heartbeat session on a carrier that pings. The one source of that wait, so the
   * expiry warning says the time since the reply, not a re-derived one.
   */
  waitOf(session: Session): number {
    return this.waitFor(session, session.carrier);
  }

  /** The wait of `session` on `carrier` (a handshake's, before any connect: `maxInterval`). */
  private waitFor(session: Session, carrier: Carrier | null): number {
    return session.connected && pinged(session, carrier) ? this.beatingInterval : this.options.maxInterval;
  }

  private flushSoon(session: Session): void {
    if (session.queue.length > 0) session.flushSoon();
  }
}

const RELAY_ENDED = '{"reconnect":"none"}';

/** Whether `session` is kept alive by the pings of `carrier`: it negotiated the heartbeat, and the carrier pings. */
function pinged(session: Session, carrier: Carrier | null): boolean {
  return session.heartbeat && carrier?.kind.pings === true;
}

function zeroTimeout(message: Message): boolean {
  return (message.advice as { timeout?: unknown } | undefined)?.timeout === 0;
}

/** The connect reply, built as text: it is the most frequent reply of all. `error` makes it a failure. */
export function connectReplyJson(
  id: string | undefined,
  clientId: string,
  adviceJson: string,
  extJson?: string,
  error?: string,
): string {
  const idPart = id === undefined ? '' : `,"id":${JSON.stringify(id)}`;
  const extPart = extJson === undefined ? '' : `,"ext":${extJson}`;
  const outcome = error === undefined ? 'true' : `false,"error":${JSON.stringify(error)}`;
  // clientIds are base64url with a dot, safe inside a JSON string as they are.
  return `{"channel":"${META_CONNECT}"${idPart},"clientId":"${clientId}","successful":${outcome},"advice":${adviceJson}${extPart}}`;
}
