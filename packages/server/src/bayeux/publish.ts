/**
 * A message on a non-meta channel: a broadcast publish (checked by `canPublish`, then
 * serialized once and handed to the engine) or a call of a `/service` handler, whose
 * result goes back to the caller only.
 */
import { type ChannelInfo, formatError, type Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { BayeuxReplyError } from '../errors.js';
import type { Session } from '../session/session.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';

export function handlePublish(
  bayou: Bayou,
  message: Message,
  info: ChannelInfo,
  ctx: BatchContext,
): void | Promise<void> {
  if (info.kind === 'meta') return fail(ctx, null, message, formatError('publishDenied', [message.channel]));
  if (info.wildcard !== null)
    return fail(ctx, null, message, formatError('channelInvalid', [message.channel]));
  const session = bayou.sessionFor(message, ctx);
  if (session === undefined) return;
  if (info.kind === 'service') return callService(bayou, message, ctx, session);
  // Records are fed by the server (updateRecord, providers), never by clients.
  if (bayou.records.patternFor(message.channel) !== undefined) {
    return fail(ctx, session, message, formatError('publishDenied', [message.channel]));
  }
  const hook = bayou.options.canPublish;
  if (hook === undefined) return broadcast(bayou, message, ctx, session, true);
  let verdict: boolean | Promise<boolean>;
  try {
    verdict = hook(session, message.channel, message);
  } catch {
    verdict = false;
  }
  if (verdict instanceof Promise) {
    return verdict.then(
      (ok) => broadcast(bayou, message, ctx, session, ok),
      () => broadcast(bayou, message, ctx, session, false),
    );
  }
  return broadcast(bayou, message, ctx, session, verdict);
}

function fail(ctx: BatchContext, session: Session | null, message: Message, error: string): void {
  sendReply(ctx, session, replyTo(message, { successful: false, error }));
}

function broadcast(
  bayou: Bayou,
  message: Message,
  ctx: BatchContext,
  session: Session,
  allowed: boolean,
): void {
  if (!allowed) {
    fail(ctx, session, message, formatError('publishDenied', [message.channel]));
    return;
  }
  sendReply(ctx, session, replyTo(message, { successful: true }));
  bayou.broadcast(message.channel, message.data);
}

function callService(
  bayou: Bayou,
  message: Message,
  ctx: BatchContext,
  session: Session,
): void | Promise<void> {
  const handler = bayou.serviceFor(message.channel);
  if (handler === undefined)
    return fail(ctx, session, message, formatError('serviceUnknown', [message.channel]));
  let result: unknown;
  try {
    result = handler(message.data, { session, message, bayou });
  } catch (err) {
    return serviceFailed(bayou, message, ctx, session, err);
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => serviceReplied(message, ctx, session, value),
      (err: unknown) => serviceFailed(bayou, message, ctx, session, err),
    );
  }
  serviceReplied(message, ctx, session, result);
}

function serviceReplied(message: Message, ctx: BatchContext, session: Session, value: unknown): void {
  sendReply(ctx, session, replyTo(message, { successful: true }));
  // The answer follows as a second message with the request's id, `successful` and
  // `data` — the shape CometD's remote calls expect. Each client reads it once: CometD
  // resolves `remoteCall` by id (or notifies `addListener` listeners), Faye hands it to
  // the `subscribe` callback, `@bayou/client` resolves `request` by id. Data in the
  // publish reply itself would skip CometD's publish callback. Every successful call is
  // answered (`data: null` when the handler returns nothing), so a caller knows it is done.
  sendReply(ctx, session, replyTo(message, { successful: true, data: value === undefined ? null : value }));
}

function serviceFailed(
  bayou: Bayou,
  message: Message,
  ctx: BatchContext,
  session: Session,
  err: unknown,
): void {
  const error =
    err instanceof BayeuxReplyError ? err.bayeuxError : formatError('serviceFailed', [message.channel]);
  if (!(err instanceof BayeuxReplyError))
    bayou.log.error({ err, channel: message.channel }, 'service handler failed');
  fail(ctx, session, message, error);
}
