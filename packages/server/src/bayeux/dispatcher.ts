/**
 * Runs a batch of incoming messages through validation, the incoming extensions and the
 * handler of each channel, in order. Everything answers synchronously unless a hook, an
 * extension or the engine returns a promise; then the rest of the batch waits for it, so
 * replies keep the order of the requests — except for the engine's acknowledgement of a
 * publish: the batch's next publishes go out behind it, their replies chained in order
 * (`pipeline.ts`), and any other message waits until they are all in.
 */
import {
  type ChannelInfo,
  META_CONNECT,
  META_DISCONNECT,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  META_UNSUBSCRIBE,
  type Message,
  validateMessage,
} from '@bayou/protocol';
import type { BatchContext } from './batch-context.js';
import { handleConnect } from './connect.js';
import { handleDisconnect } from './disconnect.js';
import type { Refusal } from './extensions.js';
import { handleHandshake } from './handshake.js';
import type { KernelApi } from './kernel-api.js';
import { inFlightSettled, pipelinable } from './pipeline.js';
import { handlePublish } from './publish.js';
import { handleSubscribe } from './subscribe.js';
import { handleUnsubscribe } from './unsubscribe.js';

export function processBatch(
  k: KernelApi,
  messages: unknown[],
  ctx: BatchContext,
  scanForProto: boolean,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < messages.length; i++) {
    const raw = messages[i];
    // Only a broadcast publish goes out behind publishes in flight; anything else waits.
    if (ctx.inFlight !== null && !pipelinable(raw))
      return inFlightSettled(ctx).then(() => processBatch(k, messages, ctx, scanForProto, i));
    const pending = processOne(k, raw, ctx, scanForProto);
    if (pending !== undefined) return pending.then(() => processBatch(k, messages, ctx, scanForProto, i + 1));
  }
  if (ctx.inFlight === null) return;
  ctx.draining = true;
  return inFlightSettled(ctx);
}

function processOne(
  k: KernelApi,
  raw: unknown,
  ctx: BatchContext,
  scanForProto: boolean,
): void | Promise<void> {
  k.stats.messagesIn++;
  const v = validateMessage(raw, scanForProto);
  if (!v.ok) {
    const reply: Record<string, unknown> = { successful: false, error: v.error };
    if (v.channel !== undefined) reply.channel = v.channel;
    if (v.id !== undefined) reply.id = v.id;
    ctx.replies.push(JSON.stringify(reply));
    return;
  }
  const message = v.message;
  const verdict = k.incoming(message, k.sessions.find(message.clientId) ?? null, ctx.request);
  if (verdict instanceof Promise) {
    return verdict.then((error) =>
      error === undefined ? route(k, message, v.channel, ctx) : refuse(k, message, ctx, error),
    );
  }
  if (verdict !== undefined) return refuse(k, message, ctx, verdict);
  return route(k, message, v.channel, ctx);
}

function route(k: KernelApi, message: Message, info: ChannelInfo, ctx: BatchContext): void | Promise<void> {
  switch (message.channel) {
    case META_HANDSHAKE:
      return handleHandshake(k, message, ctx);
    case META_CONNECT:
      return handleConnect(k, message, ctx);
    case META_SUBSCRIBE:
      return handleSubscribe(k, message, ctx);
    case META_UNSUBSCRIBE:
      return handleUnsubscribe(k, message, ctx);
    case META_DISCONNECT:
      return handleDisconnect(k, message, ctx);
    default:
      return handlePublish(k, message, info, ctx);
  }
}

/** An extension refused the message: answer it with the error, as its handler would. */
function refuse(k: KernelApi, message: Message, ctx: BatchContext, refusal: Refusal): void {
  const session = k.sessions.find(message.clientId) ?? null;
  const error = typeof refusal === 'string' ? refusal : refusal.error;
  const fields: Record<string, unknown> = { successful: false, error };
  if (session !== null) fields.clientId = session.id;
  if (message.subscription !== undefined) fields.subscription = message.subscription;
  if (typeof refusal !== 'string' && refusal.advice !== undefined) fields.advice = refusal.advice;
  else if (message.channel === META_HANDSHAKE) fields.advice = { reconnect: 'none', interval: 0 };
  k.reply(ctx, session, message, fields);
}
