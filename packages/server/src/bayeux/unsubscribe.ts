/** `/meta/unsubscribe`: one channel or an array; unknown names succeed (nothing to remove). */
import type { Message } from '@bayou/protocol';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';
import { readSubscriptions } from './subscription-list.js';

export function handleUnsubscribe(
  k: Pick<KernelApi, 'sessionFor' | 'reply' | 'channels' | 'guards'>,
  message: Message,
  ctx: BatchContext,
): void {
  const session = k.sessionFor(message, ctx);
  if (session === undefined) return;
  const names = readSubscriptions(message, false);
  const fields: Record<string, unknown> = { clientId: session.id, subscription: message.subscription };
  if (!Array.isArray(names)) {
    k.reply(ctx, session, message, { ...fields, successful: false, error: names.error });
    return;
  }
  const had = names.filter((n) => session.subscriptions.has(n));
  for (const name of names) k.channels.unsubscribe(session, name);
  k.reply(ctx, session, message, { ...fields, successful: true });
  for (const name of had) k.guards.emitSafe((e) => e.emit('unsubscribe', session, name));
}
