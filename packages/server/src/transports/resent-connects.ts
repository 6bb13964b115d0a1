/**
 * Faye's EventSource connects, sent aside of the stream on POSTs (`event-source.ts`), are
 * told `timeout: 0`, so Faye gives each up after 1.2 × its `retry` (0.12 s with `retry: 0.1`)
 * and sends the same message again, same `id`. While no stream is open such a connect's answer
 * carries what is queued (`finishPoll`), and one written as its client gives up is lost to a
 * client without acknowledgements: seen as blocks of messages missing after a drain, under
 * load, when the claim of a session handed over made that answer late.
 *
 * So what the last answer to such a connect carried is kept per session until its next one:
 * the same `id` again means the client never read that answer, and what it carried goes back
 * ahead of the queue to leave with this one; another `id` means it was read, and it is
 * forgotten. Two attempts of one connect may finish out of order (the first waited for a
 * claim): the one that arrived first is the one given up, and carries nothing. A `WeakMap`:
 * an entry goes with its session, or is replaced at the session's next connect.
 */
import { META_CONNECT } from '@bayou/protocol';
import type { Session } from '../session/session.js';
import { EVENT_SOURCE_CARRIER } from './carrier-kinds.js';

interface Carried {
  /** The connect's `id`. */
  readonly id: string;
  /** When the request whose answer this is arrived (`arrivalStamp`). */
  readonly seq: number;
  /** What that answer carried. */
  readonly messages: readonly string[];
}

const carried = new WeakMap<Session, Carried>();
let arrivals = 0;

/**
 * A request's arrival on the node that received it from its client (ms, and a count within
 * the ms): which of two attempts of one connect came last, also when one was forwarded and
 * reached the session's node after the other (the nodes of one machine share a clock; Faye's
 * attempts are at least 1.2 × `retry` apart).
 */
export function arrivalStamp(): number {
  arrivals = (arrivals + 1) % 1000;
  return Date.now() + arrivals / 1000;
}

/** The `id` of the EventSource connect (sent aside of its stream) in a batch, or `null`. */
export function asideConnectId(messages: readonly unknown[]): string | null {
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { channel, connectionType, id } = m as Record<string, unknown>;
    if (channel === META_CONNECT && connectionType === EVENT_SOURCE_CARRIER.name && typeof id === 'string')
      return id;
  }
  return null;
}

/**
 * The connect `id` of `session`, in a request that arrived at `seq`, is about to be answered:
 * when the last answer to that `id` carried messages for an earlier request, that answer was
 * never read and they go back ahead of the queue. `false` when this request came before the
 * one last answered: an attempt its client gave up on (it sent it again, or its next connect,
 * since Faye has one connect in flight at a time), finishing late — it must carry nothing.
 */
export function connectCame(session: Session, id: string | null, seq: number): boolean {
  if (id === null) return true;
  const last = carried.get(session);
  if (last !== undefined && seq < last.seq) return false;
  if (last !== undefined && last.id === id && session.deliveryMode === 'push') session.requeue(last.messages);
  carried.set(session, { id, seq, messages: NOTHING });
  return true;
}

const NOTHING: readonly string[] = Object.freeze([]);

/** The answer to connect `id` of `session` (request `seq`) carried `messages` (kept until its next connect). */
export function answered(
  session: Session,
  id: string | null,
  seq: number,
  messages: readonly string[],
): void {
  if (id === null || session.deliveryMode !== 'push') return;
  // A late attempt (it carried nothing) leaves what the newer one's answer carried.
  const last = carried.get(session);
  if (last !== undefined && seq < last.seq) return;
  carried.set(session, { id, seq, messages: messages.length === 0 ? NOTHING : messages });
}

/** Whether an answer of `session` with messages is kept (for tests). */
export function keeps(session: Session): boolean {
  return (carried.get(session)?.messages.length ?? 0) > 0;
}
