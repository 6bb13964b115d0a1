/**
 * CometD's message acknowledgement extension. A client that asks for it in its handshake
 * (`ext.ack: true`) gets its messages only inside `/meta/connect` replies, each reply
 * numbered (`ext.ack: batch`); its next connect says the last batch it received, and the
 * server resends any later batch it still holds. So a long-poll response or a frame lost
 * with its connection is delivered again after the client reconnects, in order.
 *
 * A Bayou client may also ask for numbered frames (`ext.bayou.ackFrames: true`, see
 * `EXT_ACK_FRAMES`): over a carrier whose kind has `numberedFrames` (a WebSocket, a
 * stream opened on this node) its deliveries then leave at once, as for a client
 * without ack, each frame numbered by a marker at its end, instead of one batch per
 * connect round trip. The client reports the frames it got now and then (`ext.ackFrames`
 * on a connect: forget, resend nothing, the rest is still on its way over the live socket);
 * after a reconnect its connect's `ext.ack` asks for every later frame again. Over
 * long-polling such a session is acknowledged as CometD's.
 */
import {
  ACK_MARKER_CHANNEL,
  BAYOU_EXT,
  EXT_ACK,
  EXT_ACK_FRAMES,
  formatError,
  META_CONNECT,
  META_HANDSHAKE,
  type Message,
} from '@bayou/protocol';
import type { Extension, Refusal, Reply } from '../bayeux/extensions.js';
import type { FrameNumbering, NumberedFrame } from '../session/outbound.js';
import type { ExtensionSession } from '../session/session.js';
import type { ConnectionTypes, RequestInfo } from '../types.js';

interface Batch {
  readonly batch: number;
  readonly messages: readonly string[];
}

/** An `AckState` as handed over between nodes. */
interface AckSnapshot {
  readonly batch: number;
  readonly frames: boolean;
  readonly unacked: [number, readonly string[]][];
}

/** One session's acknowledgement state. */
export class AckState {
  /** The number of the last batch sent. */
  batch = 0;
  /** Whether it asked for numbered frames (`ext.bayou.ackFrames`), used whenever its carrier numbers frames. */
  constructor(readonly frames: boolean) {}
  private unacked: Batch[] = [];
  private held = 0;
  /** Frames to send again with their own numbers on a new stream, until taken. */
  private resending: Batch[] | null = null;

  /** Messages sent and not yet acknowledged. */
  get pending(): number {
    return this.held;
  }

  /** The client received everything up to `batch`: forget it; return later batches to resend. */
  acknowledge(batch: number): string[] {
    if (this.unacked.length === 0) return [];
    const keep = this.unacked.filter((b) => b.batch > batch);
    this.unacked = [];
    this.resending = null;
    this.held = 0;
    const resend: string[] = [];
    for (const b of keep) resend.push(...b.messages);
    return resend;
  }

  /** The messages of the batches up to `batch` not acknowledged yet (for tracing). */
  sentUpTo(batch: number): (readonly string[])[] {
    const out: (readonly string[])[] = [];
    for (const b of this.unacked) if (b.batch <= batch) out.push(b.messages);
    return out;
  }

  /** The client received everything up to `batch` and the rest is on its way: forget it. */
  forget(batch: number): void {
    let i = 0;
    while (i < this.unacked.length && (this.unacked[i] as Batch).batch <= batch) {
      this.held -= (this.unacked[i] as Batch).messages.length;
      i++;
    }
    if (i > 0) this.unacked = this.unacked.slice(i);
  }

  /**
   * A new stream opens and the client received everything up to `batch`: forget that; every
   * later frame goes again with its own number (still unacknowledged until reported).
   */
  reopen(batch: number): void {
    this.forget(batch);
    this.resending = this.unacked.length > 0 ? this.unacked.slice() : null;
  }

  /** Whether `reopen` marked frames to resend that were not taken yet. */
  get resendsPending(): boolean {
    return this.resending !== null;
  }

  /** The frames `reopen` marked to resend, once. */
  takeResends(): readonly Batch[] | null {
    const frames = this.resending;
    this.resending = null;
    return frames;
  }

  /**
   * What another node needs to carry on (a drain hands the session over): the next batch
   * number — one past this one, since the reply that ends the session here takes this
   * node's next — whether frames are numbered, and what is not acknowledged yet.
   */
  toJSON(): AckSnapshot {
    return {
      batch: this.batch + 1,
      frames: this.frames,
      unacked: this.unacked.map((b) => [b.batch, b.messages]),
    };
  }

  /** The state another node handed over (`toJSON`), or `undefined` when `data` is not one. */
  static from(data: unknown): AckState | undefined {
    const d = data as Partial<AckSnapshot> | null;
    if (typeof d !== 'object' || d === null || typeof d.batch !== 'number' || !Array.isArray(d.unacked))
      return undefined;
    const state = new AckState(d.frames === true);
    state.batch = d.batch;
    for (const [batch, messages] of d.unacked) {
      state.unacked.push({ batch, messages });
      state.held += messages.length;
    }
    return state;
  }

  /** Numbers the next reply's batch, remembering its messages until acknowledged. */
  next(messages: readonly string[]): number {
    this.batch++;
    if (messages.length > 0) {
      // A copy: the caller appends the connect reply itself to its array.
      this.unacked.push({ batch: this.batch, messages: messages.slice() });
      this.held += messages.length;
    }
    return this.batch;
  }
}

/** The marker ending numbered frame `batch`. */
function markerJson(batch: number): string {
  return `{"channel":"${ACK_MARKER_CHANNEL}","ext":{"${EXT_ACK}":${batch}}}`;
}

/** The `ack` (or, with `key`, another field) a connect message reports, if any. */
export function reportedAck(
  ext: Record<string, unknown> | undefined,
  key: string = EXT_ACK,
): number | undefined {
  const ack = ext?.[key];
  return typeof ack === 'number' && Number.isInteger(ack) ? ack : undefined;
}

/** Whether a handshake asks for numbered WebSocket frames (`ext.bayou.ackFrames: true`). */
function wantsFrames(ext: Record<string, unknown> | undefined): boolean {
  const bayou = ext?.[BAYOU_EXT];
  return (
    typeof bayou === 'object' && bayou !== null && (bayou as Record<string, unknown>)[EXT_ACK_FRAMES] === true
  );
}

/** A session with ack but without numbered frames cannot stream: its messages travel in connect replies. */
function needsFrames(request: RequestInfo): Refusal {
  return {
    error: formatError('connectionTypeUnsupported', [request.transport, 'ack without ext.bayou.ackFrames']),
    advice: { reconnect: 'none' },
  };
}

/** Whether `request` opens a stream with its connect: its carrier keeps the session and opens with a connect. */
function opensStream(request: RequestInfo): boolean {
  return request.carrier.keepsSession && request.carrier.opensWithConnect;
}

export class AckExtension implements Extension, FrameNumbering {
  readonly name = 'ack';
  readonly stage = 'protocol';
  /** Sessions with more unacknowledged messages than this are reported as slow. */
  constructor(
    /** The kind a connect's `connectionType` names (`transports/carrier-kinds.ts`). */
    private readonly connectionTypes: ConnectionTypes,
    private readonly onTooManyPending: (session: ExtensionSession) => void,
    private readonly maxPending: number,
    /** Called with what a session acknowledged, only when tracing is on (`MessageTracing.acked`). */
    private readonly traceAcks:
      | ((clientId: string, batch: number, sent: (readonly string[])[]) => void)
      | null = null,
  ) {}

  /** Hands what `session` acknowledges up to `batch` to tracing, when it is on. */
  private traced(session: ExtensionSession, state: AckState, batch: number): void {
    if (this.traceAcks !== null) this.traceAcks(session.id, batch, state.sentUpTo(batch));
  }

  stateOf(session: ExtensionSession): AckState | undefined {
    // Only sessions that negotiated ack leave push delivery: the others' lazy map stays uncreated.
    if (session.deliveryMode === 'push') return undefined;
    return session.extensionState.get(this) as AckState | undefined;
  }

  /** A stream-opening connect of a session with ack but without numbered frames is refused: its messages travel in connect replies. */
  incoming(message: Message, session: ExtensionSession | null, request: RequestInfo): Refusal | undefined {
    if (session === null || message.channel !== META_CONNECT || !opensStream(request)) return undefined;
    const state = this.stateOf(session);
    return state !== undefined && !state.frames ? needsFrames(request) : undefined;
  }

  /** The connect passed every stage: its acknowledgement and its carrier now apply. */
  accepted(message: Message, session: ExtensionSession, request: RequestInfo): void {
    if (message.channel !== META_CONNECT) return;
    const state = this.stateOf(session);
    if (state === undefined) return;
    if (state.frames) {
      // Numbered frames stream over the carrier the connect came on and names, when it
      // numbers frames (a WebSocket, a stream opened here, not one relayed from another
      // node); a carrier that does not push carries them in connect replies.
      const named = this.connectionTypes((message as { connectionType?: unknown }).connectionType);
      // A stream relayed from another node polls here on a carrier that does not push; its
      // answers hold its frames, numbered and bounded here, which the relay writes as they are.
      const relayed = named !== undefined && named !== request.carrier && !request.carrier.pushes;
      const streams = (named === request.carrier || relayed) && named?.numberedFrames === true;
      session.requestDelivery(streams ? 'numbered' : 'connect-reply');
      // A connect that opens a stream starts a new link, whichever field reports the last frame
      // received (@bayou/client says `ext.ackFrames` there, as after a WebSocket reconnect
      // another client says `ext.ack`): what went down with the older stream comes again on
      // it, each frame with its own number (docs/streaming.md), on this node or relayed.
      const opens = named?.keepsSession === true && named.opensWithConnect;
      const got = reportedAck(message.ext, EXT_ACK_FRAMES) ?? (opens ? reportedAck(message.ext) : undefined);
      if (got !== undefined) this.traced(session, state, got);
      if (got !== undefined && opens && streams) {
        state.reopen(got);
        return;
      }
      if (got !== undefined && opens) session.requeue(state.acknowledge(got));
      else if (got !== undefined) state.forget(got);
    }
    const acked = reportedAck(message.ext);
    // Acknowledge before the connect is handled: whatever is resent goes in its reply.
    if (acked !== undefined) {
      this.traced(session, state, acked);
      session.requeue(state.acknowledge(acked));
    }
  }

  outgoing(reply: Reply, request: Message, session: ExtensionSession | null): void {
    if (request.channel !== META_HANDSHAKE || session === null || request.ext?.[EXT_ACK] !== true) return;
    if (reply.successful !== true) return;
    const frames = wantsFrames(request.ext);
    session.extensionState.set(this, new AckState(frames));
    // Until its first connect says which transport it is on, a session gets its messages
    // in connect replies only.
    session.requestDelivery('connect-reply');
    if (frames) {
      reply.ext = { ...reply.ext, [EXT_ACK]: { enabled: true, batch: 0, frames: true } };
    } else reply.ext = { ...reply.ext, [EXT_ACK]: { enabled: true, batch: 0 } };
  }

  handOver(session: ExtensionSession): unknown {
    return this.stateOf(session)?.toJSON();
  }

  adopt(session: ExtensionSession, data: unknown): void {
    const state = AckState.from(data);
    if (state !== undefined) session.extensionState.set(this, state);
  }

  /**
   * The marker that ends a numbered frame of `session` carrying `messages`, remembered
   * until acknowledged; `undefined` for a session without numbered frames.
   */
  marker(session: ExtensionSession, messages: readonly string[]): string | undefined {
    const state = this.stateOf(session);
    if (state === undefined || !state.frames) return undefined;
    const batch = state.next(messages);
    if (state.pending > this.maxPending) this.onTooManyPending(session);
    return markerJson(batch);
  }

  /** The frames a new stream sends again first, each with the marker it first had; `null` for none. */
  resends(session: ExtensionSession): NumberedFrame[] | null {
    const frames = this.stateOf(session)?.takeResends();
    if (frames === undefined || frames === null) return null;
    return frames.map((f) => ({ messages: f.messages, marker: markerJson(f.batch) }));
  }

  resending(session: ExtensionSession): boolean {
    return this.stateOf(session)?.resendsPending === true;
  }

  connectBatch(session: ExtensionSession, messages: readonly string[], immediate: boolean) {
    const state = this.stateOf(session);
    if (state === undefined) return undefined;
    if (immediate) return { [EXT_ACK]: state.batch };
    const batch = state.next(messages);
    if (state.pending > this.maxPending) this.onTooManyPending(session);
    return { [EXT_ACK]: batch };
  }
}
