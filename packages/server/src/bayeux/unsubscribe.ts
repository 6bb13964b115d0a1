/** `/meta/unsubscribe`: one channel or an array; unknown names succeed (nothing to remove). */
import type { Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';
import { readSubscriptions } from './subscription-list.js';

export function handleUnsubscribe(bayou: Bayou, message: Message, ctx: BatchContext): void {
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  const names = readSubscriptions(message, false);
  const fields: Record<string, unknown> = { clientId: session.id, subscription: message.subscription };
  if (!Array.isArray(names)) {
    sendReply(ctx, session, replyTo(message, { ...fields, successful: false, error: names.error }));
    return;
  }
  for (const name of names) bayou.unsubscribe(session, name);
  sendReply(ctx, session, replyTo(message, { ...fields, successful: true }));
}
