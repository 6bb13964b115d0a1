/**
 * CometD's message acknowledgement extension. A client that asks for it in its handshake
 * (`ext.ack: true`) gets its messages only inside `/meta/connect` replies, each reply
 * numbered (`ext.ack: batch`); its next connect says the last batch it received, and the
 * server resends any later batch it still holds. So a long-poll response or a frame lost
 * with its connection is delivered again after the client reconnects, in order.
 */
import type { Session } from '../session/session.js';

interface Batch {
  readonly batch: number;
  readonly messages: string[];
}

export class AckState {
  /** The number of the last batch sent. */
  batch = 0;
  private unacked: Batch[] = [];
  private held = 0;

  /** Messages sent and not yet acknowledged. */
  get pending(): number {
    return this.held;
  }

  /** The client received everything up to `batch`: forget it; put later batches back. */
  acknowledge(session: Session, batch: number): void {
    if (this.unacked.length === 0) return;
    const keep = this.unacked.filter((b) => b.batch > batch);
    this.unacked = [];
    this.held = 0;
    if (keep.length === 0) return;
    // Lost in transit: resend ahead of anything queued since, in the original order.
    const resend: string[] = [];
    for (const b of keep) resend.push(...b.messages);
    session.queue = resend.concat(session.queue);
  }

  /** Numbers the next reply's batch, remembering its messages until acknowledged. */
  next(messages: string[]): number {
    this.batch++;
    if (messages.length > 0) {
      this.unacked.push({ batch: this.batch, messages });
      this.held += messages.length;
    }
    return this.batch;
  }
}

/** Whether a handshake asks for acknowledgements. */
export function wantsAck(ext: Record<string, unknown> | undefined): boolean {
  return ext?.ack === true;
}

/** The `ack` a connect message reports, if any. */
export function reportedAck(ext: Record<string, unknown> | undefined): number | undefined {
  const ack = ext?.ack;
  return typeof ack === 'number' && Number.isInteger(ack) ? ack : undefined;
}
