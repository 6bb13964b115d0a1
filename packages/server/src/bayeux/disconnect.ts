/** `/meta/disconnect`: answers, ends any held connect, removes the session. */
import type { Message } from '@bayou/protocol';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';

export function handleDisconnect(
  k: Pick<KernelApi, 'sessionFor' | 'connects' | 'reply' | 'outbound' | 'sessions'>,
  message: Message,
  ctx: BatchContext,
): void {
  const session = k.sessionFor(message, ctx);
  if (session === undefined) return;
  if (session.held !== null) k.connects.complete(session, { reconnect: 'none' });
  k.reply(ctx, session, message, { clientId: session.id, successful: true });
  // Let the reply leave on a WebSocket before the session is gone.
  k.outbound.flush(session);
  k.sessions.remove(session, 'disconnect');
}
