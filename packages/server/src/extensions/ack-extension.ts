/**
 * CometD's message acknowledgement extension. A client that asks for it in its handshake
 * (`ext.ack: true`) gets its messages only inside `/meta/connect` replies, each reply
 * numbered (`ext.ack: batch`); its next connect says the last batch it received, and the
 * server resends any later batch it still holds. So a long-poll response or a frame lost
 * with its connection is delivered again after the client reconnects, in order.
 */
import { EXT_ACK, type Message } from '@bayou/protocol';
import type { Extension, Reply } from '../bayeux/extensions.js';
import type { ServerSession } from '../session/session.js';

interface Batch {
  readonly batch: number;
  readonly messages: readonly string[];
}

/** One session's acknowledgement state. */
export class AckState {
  /** The number of the last batch sent. */
  batch = 0;
  private unacked: Batch[] = [];
  private held = 0;

  /** Messages sent and not yet acknowledged. */
  get pending(): number {
    return this.held;
  }

  /** The client received everything up to `batch`: forget it; return later batches to resend. */
  acknowledge(batch: number): string[] {
    if (this.unacked.length === 0) return [];
    const keep = this.unacked.filter((b) => b.batch > batch);
    this.unacked = [];
    this.held = 0;
    const resend: string[] = [];
    for (const b of keep) resend.push(...b.messages);
    return resend;
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

/** The `ack` a connect message reports, if any. */
export function reportedAck(ext: Record<string, unknown> | undefined): number | undefined {
  const ack = ext?.[EXT_ACK];
  return typeof ack === 'number' && Number.isInteger(ack) ? ack : undefined;
}

export class AckExtension implements Extension {
  readonly name = 'ack';
  /** Sessions with more unacknowledged messages than this are reported as slow. */
  constructor(
    private readonly onTooManyPending: (session: ServerSession) => void,
    private readonly maxPending: number,
  ) {}

  stateOf(session: ServerSession): AckState | undefined {
    // Only sessions that negotiated ack have state: the others' lazy map stays uncreated.
    if (!session.metaConnectDeliveryOnly) return undefined;
    return session.extensionState.get(this) as AckState | undefined;
  }

  incoming(message: Message, session: ServerSession | null): undefined {
    if (session === null || message.channel !== '/meta/connect') return undefined;
    const state = this.stateOf(session);
    const acked = state === undefined ? undefined : reportedAck(message.ext);
    // Acknowledge before the connect is handled: whatever is resent goes in its reply.
    if (state !== undefined && acked !== undefined) session.requeue(state.acknowledge(acked));
    return undefined;
  }

  outgoing(reply: Reply, request: Message, session: ServerSession | null): void {
    if (request.channel !== '/meta/handshake' || session === null || request.ext?.[EXT_ACK] !== true) return;
    if (reply.successful !== true) return;
    session.extensionState.set(this, new AckState());
    session.metaConnectDeliveryOnly = true;
    reply.ext = { ...reply.ext, [EXT_ACK]: { enabled: true, batch: 0 } };
  }

  connectBatch(session: ServerSession, messages: readonly string[], immediate: boolean) {
    const state = this.stateOf(session);
    if (state === undefined) return undefined;
    if (immediate) return { [EXT_ACK]: state.batch };
    const batch = state.next(messages);
    if (state.pending > this.maxPending) this.onTooManyPending(session);
    return { [EXT_ACK]: batch };
  }

  removed(session: ServerSession): void {
    if (session.metaConnectDeliveryOnly) session.extensionState.delete(this);
  }
}
