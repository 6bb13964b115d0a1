/**
 * The per-turn flusher: sessions that got messages during this event-loop turn are
 * flushed once, together, in a `setImmediate` — one WebSocket frame per session per turn,
 * however many messages arrived. A held long-poll is answered in that same flush, unless
 * the event loop is saturated (`LoadGauge`): then it waits `longPollDelay` ms more (one
 * shared timer for all of them) so that its response, which costs a request/response
 * cycle, carries what arrives in the next moments too.
 */
import { META_CONNECT } from '@bayou/protocol';
import type { Carrier, ConnectCarrier } from './carrier.js';
import { LoadGauge } from './load-gauge.js';
import type { Session } from './session.js';

/** A frame sent again with the number it first had (its marker), after a stream was cut. */
export interface NumberedFrame {
  readonly messages: readonly string[];
  readonly marker: string;
}

/** How a session's frames are numbered (the ack extension's), for sessions in `numbered` delivery. */
export interface FrameNumbering {
  /** The marker ending a numbered frame carrying `messages`, remembered until acknowledged. */
  marker(session: Session, messages: readonly string[]): string | undefined;
  /** Frames to send again with their own numbers, ahead of anything newer (taken once), or `null`. */
  resends(session: Session): readonly NumberedFrame[] | null;
  /** Whether `resends` has frames for `session` now. */
  resending(session: Session): boolean;
}

/** Where a bounded flush puts each frame: `messages`, then the `marker` numbering it, if any. */
type FrameSink = (session: Session, messages: string[], marker: string | undefined) => void;

/** Room a frame's brackets and its ack marker (`{"channel":"/meta/ack","ext":{"ack":N}}`) take. */
const FRAME_OVERHEAD = 2 + 64;
const CONNECT_REPLY_HEAD = `{"channel":"${META_CONNECT}"`;

export interface FlushStats {
  messagesOut: number;
  bytesOut: number;
  frames: number;
}

export class Outbound {
  private pending: Session[] = [];
  private scheduled = false;
  /** Sessions whose held long-poll is answered when the shared delay timer fires. */
  private polls: Session[] = [];
  private pollTimer: NodeJS.Timeout | null = null;
  private readonly completePolls = (): void => {
    this.pollTimer = null;
    const due = this.polls;
    this.polls = [];
    for (let i = 0; i < due.length; i++) {
      const session = due[i] as Session;
      session.flushTaken();
      if (session.carrier !== null) this.flush(session);
      else if (session.held?.poll && this.hasFrames(session) && session.state !== 'removed') {
        this.completePoll(session);
      }
    }
  };
  readonly stats: FlushStats = { messagesOut: 0, bytesOut: 0, frames: 0 };
  /** The last single-message frame built, and the message it holds (compared by identity). */
  private lastSingle: string | null = null;
  private lastSingleFrame: Buffer = Buffer.alloc(0);
  /** The messages of the last frame to a compressing carrier, and their encoded head once shared. */
  private lastMessages: readonly string[] = [];
  private lastHead: Buffer | null = null;
  private lastWhole: Buffer | null = null;
  private readonly flushAll = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i++) this.flush(batch[i] as Session);
    this.flushed();
  };
  constructor(
    /** Called when a session with a held long-poll has messages: the host completes it. */
    private readonly completePoll: (session: Session) => void,
    /** Called when a WebSocket buffers more than `maxBufferedBytes`: a slow consumer. */
    private readonly overflow: (session: Session) => void,
    private readonly maxBufferedBytes: number,
    private readonly longPollDelay: number,
    /** The ack extension's numbering, for sessions in `numbered` delivery. */
    private readonly numbering: FrameNumbering,
    /** Whether the event loop is saturated: only then do held long-polls wait for more. */
    private readonly saturated: () => boolean = new LoadGauge().busy,
    /** Called after each per-turn flush (the publish-to-write clock). */
    private readonly flushed: () => void = () => undefined,
  ) {}

  schedule(session: Session): void {
    this.pending.push(session);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushAll);
    }
  }

  /** Writes what `session` has queued to its carrier, if it has one now. */
  flush(session: Session): void {
    session.flushTaken();
    if (session.state === 'removed') return;
    if (!this.hasFrames(session)) return;
    const mode = session.deliveryMode;
    if (session.carrier !== null && mode !== 'connect-reply') {
      const limit = session.carrier.maxFrameBytes;
      if (limit !== undefined) {
        this.flushBounded(session, limit, mode === 'numbered');
        return;
      }
      const messages = session.drain();
      this.sendFrame(
        session,
        messages,
        mode === 'numbered' ? this.numbering.marker(session, messages) : undefined,
      );
      return;
    }
    // Long-polling, or delivery in connect replies: messages leave with a connect reply.
    const held = session.held;
    if (held === null) return;
    if (held.poll === null || this.longPollDelay === 0 || !this.saturated()) {
      this.completePoll(session);
      return;
    }
    // Stays "scheduled" until the shared timer answers it, so new messages just queue.
    session.flushParked();
    this.polls.push(session);
    this.pollTimer ??= setTimeout(this.completePolls, this.longPollDelay);
  }

  /** The marker a frame of `session` without messages ends with (a stream's recycle notice), if numbered. */
  emptyFrameMarker(session: Session): string | undefined {
    return session.deliveryMode === 'numbered' ? this.numbering.marker(session, []) : undefined;
  }

  /**
   * The answer to the held poll of a stream relayed from another node
   * (`cluster/stream-relay.ts`), in `numbered` delivery: the frames a bounded carrier's flush
   * would write — resends with their own numbers first, then what is queued in frames of at
   * most `limit` bytes — each followed by its marker, in one array the relay splits at the
   * markers. Without `withMessages` (the poll let go) only a fresh marker, numbering the
   * recycle notice the relay may write next.
   */
  relayedFrames(session: Session, limit: number, withMessages: boolean): string[] {
    const out: string[] = [];
    if (!withMessages) {
      const marker = this.numbering.marker(session, []);
      if (marker !== undefined) out.push(marker);
      return out;
    }
    this.flushBounded(session, limit, true, (_s, messages, marker) => {
      for (let i = 0; i < messages.length; i++) out.push(messages[i] as string);
      if (marker !== undefined) out.push(marker);
    });
    return out;
  }

  /** Whether something waits: queued messages, or frames to send again (a relayed stream reopened after a cut). */
  private hasFrames(session: Session): boolean {
    return session.queue.length > 0 || this.resending(session);
  }

  /** Whether frames wait to be sent again with their numbers (a stream reopened after a cut). */
  resending(session: Session): boolean {
    return session.deliveryMode === 'numbered' && this.numbering.resending(session);
  }

  /** Writes one frame on the session's carrier (the sink of a bounded flush on this node). */
  private readonly writeFrame: FrameSink = (session, messages, marker) =>
    this.sendFrame(session, messages, marker);

  /**
   * A carrier whose frames are bounded (a stream: `streamMaxBytes` less its padding): what
   * is queued leaves in as many frames as it takes, each numbered. After a cut, the frames
   * the client did not report leave first again, with their own numbers — after the
   * opening connect reply, alone (nothing in it to acknowledge) — then anything newer.
   */
  private flushBounded(session: Session, limit: number, numbered: boolean, sink = this.writeFrame): void {
    let messages = session.drain();
    const resends = numbered ? this.numbering.resends(session) : null;
    if (resends !== null) {
      if (messages.length > 0 && (messages[0] as string).startsWith(CONNECT_REPLY_HEAD)) {
        sink(session, messages.slice(0, 1), undefined);
        messages = messages.slice(1);
      }
      for (const frame of resends) sink(session, frame.messages.slice(), frame.marker);
    }
    let start = 0;
    let size = FRAME_OVERHEAD;
    for (let i = 0; i < messages.length; i++) {
      const bytes = Buffer.byteLength(messages[i] as string) + 1;
      // A message larger than a frame on its own still goes, alone: a message is never split.
      if (i > start && size + bytes > limit) {
        this.boundedFrame(session, messages.slice(start, i), numbered, sink);
        start = i;
        size = FRAME_OVERHEAD;
      }
      size += bytes;
    }
    if (start < messages.length)
      this.boundedFrame(session, start === 0 ? messages : messages.slice(start), numbered, sink);
  }

  private boundedFrame(session: Session, messages: string[], numbered: boolean, sink: FrameSink): void {
    sink(session, messages, numbered ? this.numbering.marker(session, messages) : undefined);
  }

  /** One frame on the session's carrier holding `messages` (serialized JSON strings), then `tail` if given. */
  sendFrame(session: Session, messages: readonly string[], tail?: string): void {
    const carrier = session.carrier;
    if (carrier === null) return;
    let bytes: number;
    if (carrier.compressesShared === true && messages.length > 0 && this.shared(messages))
      bytes = this.sendShared(carrier, messages, tail);
    else if (tail !== undefined) bytes = carrier.sendText(`[${messages.join(',')},${tail}]`, messages.length);
    else if (messages.length === 1) {
      // One publication reaching many sessions alone in a turn: encode its frame once.
      const only = messages[0] as string;
      if (only !== this.lastSingle) {
        this.lastSingle = only;
        this.lastSingleFrame = Buffer.from(`[${only}]`, 'utf8');
      }
      bytes = carrier.sendText(this.lastSingleFrame, 1);
    } else bytes = carrier.sendText(`[${messages.join(',')}]`, messages.length);
    this.stats.messagesOut += messages.length;
    this.stats.bytesOut += bytes;
    this.stats.frames++;
    if (carrier.bufferedAmount > this.maxBufferedBytes) this.overflow(session);
  }

  /**
   * Whether `messages` are those of the last frame sent to a compressing carrier (the same
   * strings: one publication, or one turn's publications, reaching many sessions alike).
   * Remembers them otherwise, for the next frame.
   */
  private shared(messages: readonly string[]): boolean {
    const last = this.lastMessages;
    let same = last.length === messages.length;
    for (let i = 0; same && i < messages.length; i++) same = last[i] === messages[i];
    if (!same) {
      // A copy: the array may be the caller's to change.
      this.lastMessages = messages.slice();
      this.lastHead = null;
      this.lastWhole = null;
    }
    return same;
  }

  /**
   * A frame of the messages the frame before held, to a compressing carrier: encoded once,
   * so the carrier compresses it once for all. A numbered frame shares its head (`[…,`),
   * and ends with its own marker (`sendParts`).
   */
  private sendShared(carrier: Carrier, messages: readonly string[], tail: string | undefined): number {
    if (tail === undefined) {
      // A single message's frame is the one already encoded for it (compressed once, as before).
      if (messages.length === 1 && messages[0] === this.lastSingle) this.lastWhole ??= this.lastSingleFrame;
      this.lastWhole ??= Buffer.from(`[${messages.join(',')}]`, 'utf8');
      return carrier.sendText(this.lastWhole, messages.length);
    }
    if (carrier.sendParts === undefined)
      return carrier.sendText(`[${messages.join(',')},${tail}]`, messages.length);
    this.lastHead ??= Buffer.from(`[${messages.join(',')},`, 'utf8');
    return carrier.sendParts(this.lastHead, `${tail}]`, messages.length);
  }

  /**
   * Answers the connect held on `carrier` with `messages` as one frame — the same call for
   * every transport (`ConnectCarrier.answer`): a long-poll's response, a frame on a carrier
   * that pushes — and counts it.
   */
  answer(session: Session, carrier: ConnectCarrier, messages: string[]): void {
    const bytes = carrier.answer(messages);
    // A long-poll whose client went away answers nothing.
    if (bytes === 0) return;
    this.stats.messagesOut += messages.length;
    this.stats.bytesOut += bytes;
    this.stats.frames++;
    const bound = session.carrier;
    if (bound === carrier && bound.bufferedAmount > this.maxBufferedBytes) this.overflow(session);
  }

  /** Counts a long-poll response written elsewhere. */
  countResponse(messages: number, bytes: number): void {
    this.stats.messagesOut += messages;
    this.stats.bytesOut += bytes;
    this.stats.frames++;
  }
}
