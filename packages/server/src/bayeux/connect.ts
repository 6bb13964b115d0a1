/**
 * `/meta/connect`: binds the session to the carrier the connect came on and holds the
 * connect — up to `timeout` — until there is something to send. The first connect after
 * a handshake is answered at once, as CometD does; one held connect per session.
 */
import type { Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';

export function handleConnect(bayou: Bayou, message: Message, ctx: BatchContext): void {
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  bayou.bindCarrier(session, ctx);
  // A new connect supersedes a held one: answer the old one now.
  if (session.held !== null) bayou.completeConnect(session);
  const { interval, timeout, multiSessionInterval } = bayou.options;
  const reply = replyTo(message, {
    clientId: session.id,
    successful: true,
    advice: { reconnect: 'retry', interval, timeout } as Record<string, unknown>,
  });
  const first = session.state === 'handshaken';
  session.state = 'connected';
  const clientTimeout = (message.advice as { timeout?: unknown } | undefined)?.timeout;
  let immediate = first || clientTimeout === 0 || (ctx.poll !== null && session.queue.length > 0);
  if (!immediate && ctx.poll !== null && ctx.browserId !== null && !bayou.acquireBrowserSlot(ctx.browserId)) {
    reply.advice = { reconnect: 'retry', interval: multiSessionInterval, 'multiple-clients': true };
    immediate = true;
  }
  if (immediate) {
    session.expiresAt = Date.now() + bayou.options.maxInterval;
    sendReply(ctx, session, reply);
    return;
  }
  session.held = {
    reply,
    deadline: Date.now() + timeout,
    poll: ctx.poll,
    browserId: ctx.poll !== null ? ctx.browserId : null,
  };
  session.expiresAt = Number.POSITIVE_INFINITY;
  if (ctx.poll !== null) ctx.held = true;
}
