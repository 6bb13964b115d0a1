/**
 * `/meta/subscribe`: one channel or an array, checked against the limit and
 * `canSubscribe`, then subscribed through the kernel (the engine learns of a channel's
 * first subscriber on this node). The reply comes before the record snapshot it brings.
 */
import { formatError, type Message } from '@bayou/protocol';
import type { MaybePromise } from '../engine/engine.js';
import { guard, type HookOutcome } from '../kernel/hooks.js';
import type { Session } from '../session/session.js';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';
import { readSubscriptions } from './subscription-list.js';

type SubscribeKernel = Pick<
  KernelApi,
  'options' | 'taps' | 'log' | 'sessionFor' | 'reply' | 'channels' | 'guards'
>;

export function handleSubscribe(
  k: SubscribeKernel,
  message: Message,
  ctx: BatchContext,
): void | Promise<void> {
  const session = k.sessionFor(message, ctx);
  if (session === undefined) return;
  const names = readSubscriptions(message, true);
  if (!Array.isArray(names)) return fail(k, ctx, session, message, names.error);
  const max = k.options.maxSubscriptionsPerSession;
  const added = names.filter((n) => !session.subscriptions.has(n)).length;
  if (session.subscriptions.size + added > max) {
    return fail(k, ctx, session, message, formatError('subscriptionLimit', [max]));
  }
  const hook = k.options.canSubscribe;
  if (hook === undefined) return subscribeAll(k, ctx, session, message, names);
  const gate = k.taps.consoleGate;
  if (gate !== null && names.every((n) => gate.subscribe(session, n)))
    return subscribeAll(k, ctx, session, message, names);
  const outcomes = names.map((n) => guard(() => hook(session, n, message), k.log, 'canSubscribe hook'));
  if (outcomes.some((o) => o instanceof Promise)) {
    return Promise.all(outcomes).then((all) => decide(k, ctx, session, message, names, all));
  }
  return decide(k, ctx, session, message, names, outcomes as HookOutcome<boolean>[]);
}

function decide(
  k: SubscribeKernel,
  ctx: BatchContext,
  session: Session,
  message: Message,
  names: string[],
  outcomes: HookOutcome<boolean>[],
): void | Promise<void> {
  for (let i = 0; i < names.length; i++) {
    const o = outcomes[i] as HookOutcome<boolean>;
    if (!o.ok) return fail(k, ctx, session, message, o.error);
    if (o.value === false)
      return fail(k, ctx, session, message, formatError('subscribeDenied', [names[i] as string]));
  }
  return subscribeAll(k, ctx, session, message, names);
}

function subscribeAll(
  k: SubscribeKernel,
  ctx: BatchContext,
  session: Session,
  message: Message,
  names: string[],
): void | Promise<void> {
  const fresh = names.filter((n) => !session.subscriptions.has(n));
  const results: MaybePromise<string | undefined>[] = names.map((n) =>
    k.channels.subscribe(session, n, message),
  );
  if (results.some((r) => r instanceof Promise)) {
    return Promise.all(results).then((all) => finish(k, ctx, session, message, names, fresh, all));
  }
  return finish(k, ctx, session, message, names, fresh, results as (string | undefined)[]);
}

function finish(
  k: SubscribeKernel,
  ctx: BatchContext,
  session: Session,
  message: Message,
  names: string[],
  fresh: string[],
  errors: (string | undefined)[],
): void {
  const error = errors.find((e) => e !== undefined);
  if (error !== undefined || session.state === 'removed') {
    for (const n of fresh) k.channels.unsubscribe(session, n);
    if (error !== undefined) fail(k, ctx, session, message, error);
    return;
  }
  // Listeners may queue messages for the new subscriber: the reply goes ahead of them.
  const mark = session.queue.length;
  for (const name of fresh) {
    if (!k.guards.emitSafe((e) => e.emit('subscribe', session, name))) {
      for (const n of fresh) k.channels.unsubscribe(session, n);
      fail(k, ctx, session, message, formatError('internalError'));
      return;
    }
  }
  k.reply(
    ctx,
    session,
    message,
    { clientId: session.id, successful: true, subscription: message.subscription },
    mark,
  );
  for (const name of names) k.channels.subscribed(session, name);
}

function fail(
  k: SubscribeKernel,
  ctx: BatchContext,
  session: Session,
  message: Message,
  error: string,
): void {
  k.reply(ctx, session, message, {
    clientId: session.id,
    successful: false,
    error,
    subscription: message.subscription,
  });
}
