/**
 * The per-turn flusher: sessions that got messages during this event-loop turn are
 * flushed once, together, in a `setImmediate` — one WebSocket frame or one long-poll
 * response per session per turn, however many messages arrived.
 */
import type { Session } from './session.js';

export interface FlushStats {
  messagesOut: number;
  bytesOut: number;
  frames: number;
}

export class Outbound {
  private pending: Session[] = [];
  private scheduled = false;
  readonly stats: FlushStats = { messagesOut: 0, bytesOut: 0, frames: 0 };
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
    session.flushScheduled = false;
    if (session.queue.length === 0 || session.state === 'removed') return;
    const socket = session.socket;
    if (socket !== null) {
      const messages = session.drain();
      const frame = messages.length === 1 ? `[${messages[0]}]` : `[${messages.join(',')}]`;
      this.stats.messagesOut += messages.length;
      this.stats.bytesOut += frame.length;
      this.stats.frames++;
      socket.send(frame);
      if (socket.bufferedAmount > this.maxBufferedBytes) this.overflow(session);
    } else if (session.held?.poll) {
      this.completePoll(session);
    }
  }

  /** Counts a long-poll response written elsewhere. */
  countResponse(messages: number, bytes: number): void {
    this.stats.messagesOut += messages;
    this.stats.bytesOut += bytes;
    this.stats.frames++;
  }
}
