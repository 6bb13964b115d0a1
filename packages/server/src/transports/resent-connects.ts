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
 * forgotten. A `WeakMap`: an entry goes with its session, or at the session's next connect.
 */
import { META_CONNECT } from '@bayou/protocol';
import type { Session } from '../session/session.js';
import { EVENT_SOURCE_CARRIER } from './carrier-kinds.js';

interface Carried {
  readonly id: string;
  readonly messages: readonly string[];
}

const carried = new WeakMap<Session, Carried>();

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
 * The connect `id` of `session` came (before its answer is made): when it is the one whose
 * answer carried messages last, that answer was never read and they go back ahead of the queue.
 */
export function connectCame(session: Session, id: string | null): void {
  if (id === null) return;
  const last = carried.get(session);
  if (last === undefined) return;
  carried.delete(session);
  if (last.id === id && session.deliveryMode === 'push') session.requeue(last.messages.slice());
}

/** The answer to connect `id` of `session` carried `messages` (kept until its next connect). */
export function answered(session: Session, id: string | null, messages: readonly string[]): void {
  if (id === null || messages.length === 0 || session.deliveryMode !== 'push') return;
  carried.set(session, { id, messages });
}

/** Whether an answer of `session` is kept (for tests). */
export function keeps(session: Session): boolean {
  return carried.has(session);
}
