/**
 * `/meta/connect`: binds the session to the carrier the connect came on and holds the
 * connect — up to `timeout` — until there is something to send. The first connect after
 * a handshake is answered at once, as CometD does; one held connect per session.
 */
import type { Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { reportedAck } from './ack.js';
import { type BatchContext, sendReplyJson } from './batch-context.js';

export function handleConnect(bayou: Bayou, message: Message, ctx: BatchContext): void {
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  bayou.bindCarrier(session, ctx);
  // A new connect supersedes a held one: answer the old one now.
  if (session.held !== null) bayou.completeConnect(session);
  const acked = session.ack !== null ? reportedAck(message.ext) : undefined;
  if (acked !== undefined) session.ack?.acknowledge(session, acked);
  const first = session.state === 'handshaken';
  session.state = 'connected';
  const clientTimeout = (message.advice as { timeout?: unknown } | undefined)?.timeout;
  let advice: string | null = first || clientTimeout === 0 ? bayou.connectAdvice : null;
  if (
    advice === null &&
    ctx.poll !== null &&
    ctx.browserId !== null &&
    !bayou.acquireBrowserSlot(ctx.browserId)
  ) {
    advice = bayou.multipleClientsAdvice;
  }
  if (advice !== null) {
    session.expiresAt = Date.now() + bayou.options.maxInterval;
    // Answered at once, carrying no messages: with acks, a batch number nothing new.
    const ext = session.ack !== null ? `{"ack":${session.ack.batch}}` : undefined;
    sendReplyJson(ctx, session, connectReplyJson(message.id, session.id, advice, ext));
    return;
  }
  // Only the id is kept while the connect is held: the reply is built when it completes.
  session.held = {
    id: message.id,
    deadline: Date.now() + bayou.options.timeout,
    poll: ctx.poll,
    browserId: ctx.poll !== null ? ctx.browserId : null,
  };
  session.expiresAt = Number.POSITIVE_INFINITY;
  if (ctx.poll !== null) ctx.held = true;
  else if (session.ack === null) return;
  // Messages already waiting (on long-polling, or for an acknowledging session): the
  // flusher answers the connect with them, and with whatever else arrives by then.
  if (session.queue.length > 0 && !session.flushScheduled) {
    session.flushScheduled = true;
    bayou.scheduleFlush(session);
  }
}

/** The connect reply, built as text: it is the most frequent reply of all. */
export function connectReplyJson(
  id: string | undefined,
  clientId: string,
  adviceJson: string,
  extJson?: string,
): string {
  const idPart = id === undefined ? '' : `,"id":${JSON.stringify(id)}`;
  const extPart = extJson === undefined ? '' : `,"ext":${extJson}`;
  // clientIds are base64url, safe inside a JSON string as they are.
  return `{"channel":"/meta/connect"${idPart},"clientId":"${clientId}","successful":true,"advice":${adviceJson}${extPart}}`;
}
