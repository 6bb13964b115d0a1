/**
 * A message on a non-meta channel: a broadcast publish (checked by `canPublish`, then
 * handed to the engine, and acknowledged once the engine has it) or a call of a
 * `/service` handler, whose result goes back to the caller only.
 */
import { type ChannelInfo, EXT_TRACEPARENT, formatError, isTraceparent, type Message } from '@bayou/protocol';
import { andThen, guard, type HookOutcome } from '../kernel/hooks.js';
import type { Session } from '../session/session.js';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';
import { answerInOrder, pipelinedMark } from './pipeline.js';

type PublishKernel = Pick<
  KernelApi,
  | 'options'
  | 'log'
  | 'app'
  | 'sessionFor'
  | 'reply'
  | 'publisher'
  | 'guards'
  | 'services'
  | 'channels'
  | 'stats'
>;

export function handlePublish(
  k: PublishKernel,
  message: Message,
  info: ChannelInfo,
  ctx: BatchContext,
): void | Promise<void> {
  if (info.kind === 'meta')
    return fail(k, ctx, null, message, formatError('publishDenied', [message.channel]));
  if (info.wildcard !== null)
    return fail(k, ctx, null, message, formatError('channelInvalid', [message.channel]));
  const session = k.sessionFor(message, ctx);
  if (session === undefined) return;
  if (info.kind === 'service') return callService(k, message, ctx, session);
  // Records are fed by the server (updateRecord, providers), never by clients.
  if (k.channels.isRecordSubject(message.channel)) {
    return fail(k, ctx, session, message, formatError('publishDenied', [message.channel]));
  }
  const hook = k.options.canPublish;
  if (hook === undefined) return broadcast(k, message, ctx, session);
  const outcome = guard(() => hook(session, message.channel, message), k.log, 'canPublish hook');
  return settle(
    andThen(outcome, (o: HookOutcome<boolean>) => {
      if (!o.ok) return fail(k, ctx, session, message, o.error);
      if (o.value === false)
        return fail(k, ctx, session, message, formatError('publishDenied', [message.channel]));
      return broadcast(k, message, ctx, session);
    }),
  );
}

function broadcast(k: PublishKernel, message: Message, ctx: BatchContext, session: Session): void {
  // The publisher may be a subscriber: its reply goes ahead of its own copy.
  const mark = session.queue.length;
  const trace = message.ext?.[EXT_TRACEPARENT];
  const accepted = k.guards.engineCall(
    () => k.publisher.publish(message.channel, message.data, isTraceparent(trace) ? trace : undefined),
    () => undefined,
  );
  const answer = (error: string | undefined, at: number): void => {
    if (error !== undefined) fail(k, ctx, session, message, error);
    else k.reply(ctx, session, message, { successful: true }, at);
  };
  if (!(accepted instanceof Promise)) {
    answer(accepted, mark);
    return;
  }
  // The batch goes on; the reply follows once this and every earlier publish are in.
  answerInOrder(ctx, accepted, (error) => answer(error, pipelinedMark(ctx, session, mark)));
}

function callService(
  k: PublishKernel,
  message: Message,
  ctx: BatchContext,
  session: Session,
): void | Promise<void> {
  const handler = k.services.lookup(message.channel);
  if (handler === undefined)
    return fail(k, ctx, session, message, formatError('serviceUnknown', [message.channel]));
  const started = performance.now();
  const outcome = guard(
    () => handler(message.data, { session, message, bayou: k.app }),
    k.log,
    'service handler',
  );
  return settle(
    andThen(outcome, (o) => {
      k.stats.serviceTimed((performance.now() - started) / 1000);
      if (!o.ok) {
        const error =
          o.error === formatError('internalError')
            ? formatError('serviceFailed', [message.channel])
            : o.error;
        return fail(k, ctx, session, message, error);
      }
      k.reply(ctx, session, message, { successful: true });
      // The answer follows as a second message with the request's id, `successful` and
      // `data` — the shape CometD's remote calls expect. Each client reads it once: CometD
      // resolves `remoteCall` by id (or notifies `addListener` listeners), Faye hands it to
      // the `subscribe` callback, `@bayou/client` resolves `request` by id. Data in the
      // publish reply itself would skip CometD's publish callback. Every successful call is
      // answered (`data: null` when the handler returns nothing), so a caller knows it is done.
      k.reply(ctx, session, message, { successful: true, data: o.value === undefined ? null : o.value });
    }),
  );
}

function fail(
  k: PublishKernel,
  ctx: BatchContext,
  session: Session | null,
  message: Message,
  error: string,
): void {
  k.reply(ctx, session, message, { successful: false, error });
}

function settle(r: void | Promise<void>): void | Promise<void> {
  return r instanceof Promise ? r : undefined;
}
