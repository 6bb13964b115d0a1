/**
 * Runs a batch of incoming messages through validation and the handler of each channel,
 * in order. Handlers answer synchronously unless a hook returns a promise; then the rest
 * of the batch waits for it, so replies keep the order of the requests.
 */
import {
  META_CONNECT,
  META_DISCONNECT,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  META_UNSUBSCRIBE,
  validateMessage,
} from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { type BatchContext, sendReply } from './batch-context.js';
import { handleConnect } from './connect.js';
import { handleDisconnect } from './disconnect.js';
import { handleHandshake } from './handshake.js';
import { handlePublish } from './publish.js';
import { handleSubscribe } from './subscribe.js';
import { handleUnsubscribe } from './unsubscribe.js';

export function processBatch(
  bayou: Bayou,
  messages: unknown[],
  ctx: BatchContext,
  scanForProto: boolean,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < messages.length; i++) {
    const pending = processOne(bayou, messages[i], ctx, scanForProto);
    if (pending !== undefined)
      return pending.then(() => processBatch(bayou, messages, ctx, scanForProto, i + 1));
  }
}

function processOne(
  bayou: Bayou,
  raw: unknown,
  ctx: BatchContext,
  scanForProto: boolean,
): void | Promise<void> {
  bayou.stats.messagesIn++;
  const v = validateMessage(raw, scanForProto);
  if (!v.ok) {
    const reply: Record<string, unknown> = { successful: false, error: v.error };
    if (v.channel !== undefined) reply.channel = v.channel;
    if (v.id !== undefined) reply.id = v.id;
    sendReply(ctx, null, reply);
    return;
  }
  const message = v.message;
  switch (message.channel) {
    case META_HANDSHAKE:
      return handleHandshake(bayou, message, ctx);
    case META_CONNECT:
      return handleConnect(bayou, message, ctx);
    case META_SUBSCRIBE:
      return handleSubscribe(bayou, message, ctx);
    case META_UNSUBSCRIBE:
      return handleUnsubscribe(bayou, message, ctx);
    case META_DISCONNECT:
      return handleDisconnect(bayou, message, ctx);
    default:
      return handlePublish(bayou, message, v.channel, ctx);
  }
}
