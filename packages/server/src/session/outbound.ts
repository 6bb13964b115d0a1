/**
 * The per-turn flusher: sessions that got messages during this event-loop turn are
 * flushed once, together, in a `setImmediate` — one WebSocket frame per session per turn,
 * however many messages arrived. A held long-poll is answered in that same flush, unless
 * the event loop is saturated (`LoadGauge`): then it waits `longPollDelay` ms more (one
 * shared timer for all of them) so that its response, which costs a request/response
 * cycle, carries what arrives in the next moments too.
 */
import { LoadGauge } from './load-gauge.js';
import type { Session } from './session.js';

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
      else if (session.held?.poll && session.queue.length > 0 && session.state !== 'removed') {
        this.completePoll(session);
      }
    }
  };
  readonly stats: FlushStats = { messagesOut: 0, bytesOut: 0, frames: 0 };
  /** The last single-message frame built, and the message it holds (compared by identity). */
  private lastSingle: string | null = null;
  private lastSingleFrame: Buffer = Buffer.alloc(0);
  private readonly flushAll = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i++) this.flush(batch[i] as Session);
  };
  constructor(
    /** Called when a session with a held long-poll has messages: the host completes it. */
    private readonly completePoll: (session: Session) => void,
    /** Called when a WebSocket buffers more than `maxBufferedBytes`: a slow consumer. */
    private readonly overflow: (session: Session) => void,
    private readonly maxBufferedBytes: number,
    private readonly longPollDelay: number,
    /** The marker ending a numbered frame (the ack extension's), for sessions in `numbered` delivery. */
    private readonly frameMarker: (session: Session, messages: readonly string[]) => string | undefined,
    /** Whether the event loop is saturated: only then do held long-polls wait for more. */
    private readonly saturated: () => boolean = new LoadGauge().busy,
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
    if (session.queue.length === 0 || session.state === 'removed') return;
    const mode = session.deliveryMode;
    if (session.carrier !== null && mode !== 'connect-reply') {
      const messages = session.drain();
      this.sendFrame(
        session,
        messages,
        mode === 'numbered' ? this.frameMarker(session, messages) : undefined,
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

  /** One frame on the session's carrier holding `messages` (serialized JSON strings), then `tail` if given. */
  sendFrame(session: Session, messages: string[], tail?: string): void {
    const carrier = session.carrier;
    if (carrier === null) return;
    let bytes: number;
    if (tail !== undefined) bytes = carrier.sendText(`[${messages.join(',')},${tail}]`, messages.length);
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

  /** Counts a long-poll response written elsewhere. */
  countResponse(messages: number, bytes: number): void {
    this.stats.messagesOut += messages;
    this.stats.bytesOut += bytes;
    this.stats.frames++;
  }
}
