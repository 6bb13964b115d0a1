/** `/meta/subscribe`: one channel or an array, checked against the limit and `canSubscribe`. */
import { formatError, type Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import type { Session } from '../session/session.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';
import { readSubscriptions } from './subscription-list.js';

export function handleSubscribe(bayou: Bayou, message: Message, ctx: BatchContext): void | Promise<void> {
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  const names = readSubscriptions(message, true);
  if (!Array.isArray(names)) return fail(ctx, session, message, names.error);
  const max = bayou.options.maxSubscriptionsPerSession;
  const added = names.filter((n) => !session.subscriptions.has(n)).length;
  if (session.subscriptions.size + added > max) {
    return fail(ctx, session, message, formatError('subscriptionLimit', [max]));
  }
  const hook = bayou.options.canSubscribe;
  if (hook === undefined) return finish(bayou, ctx, session, message, names, null);
  const verdicts = names.map((n) => hook(session, n, message));
  if (verdicts.some((v) => v instanceof Promise)) {
    return Promise.all(verdicts).then(
      (all) => finish(bayou, ctx, session, message, names, firstDenied(names, all)),
      () => finish(bayou, ctx, session, message, names, names[0] as string),
    );
  }
  return finish(bayou, ctx, session, message, names, firstDenied(names, verdicts as boolean[]));
}

function firstDenied(names: string[], verdicts: boolean[]): string | null {
  const i = verdicts.indexOf(false);
  return i < 0 ? null : (names[i] as string);
}

function fail(ctx: BatchContext, session: Session, message: Message, error: string): void {
  sendReply(
    ctx,
    session,
    replyTo(message, { clientId: session.id, successful: false, error, subscription: message.subscription }),
  );
}

function finish(
  bayou: Bayou,
  ctx: BatchContext,
  session: Session,
  message: Message,
  names: string[],
  denied: string | null,
): void {
  if (denied !== null) {
    fail(ctx, session, message, formatError('subscribeDenied', [denied]));
    return;
  }
  if (session.state === 'removed') return;
  // The reply goes first: a record snapshot queued by the subscription follows it.
  sendReply(
    ctx,
    session,
    replyTo(message, { clientId: session.id, successful: true, subscription: message.subscription }),
  );
  for (const name of names) bayou.subscribe(session, name, message);
}
