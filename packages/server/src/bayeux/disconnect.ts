/** `/meta/disconnect`: answers, ends any held connect, removes the session. */
import type { Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';

export function handleDisconnect(bayou: Bayou, message: Message, ctx: BatchContext): void {
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  if (session.held !== null) bayou.completeConnect(session, { reconnect: 'none' });
  sendReply(ctx, session, replyTo(message, { clientId: session.id, successful: true }));
  // Let the reply leave on a WebSocket before the session is gone.
  bayou.outbound.flush(session);
  bayou.removeSession(session, 'disconnect');
}
