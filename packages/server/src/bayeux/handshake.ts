/** `/meta/handshake`: version and connection types, the `authenticate` hook, a new session. */
import { BAYEUX_VERSION, formatError, type Message } from '@bayou/protocol';
import type { Bayou } from '../bayou.js';
import { AckState, wantsAck } from './ack.js';
import { type BatchContext, replyTo, sendReply } from './batch-context.js';

type AuthResult = boolean | undefined | Record<string, unknown>;

export function handleHandshake(bayou: Bayou, message: Message, ctx: BatchContext): void | Promise<void> {
  const offered = bayou.options.transports;
  if (typeof message.version !== 'string' || !message.version.startsWith('1.')) {
    return refuse(ctx, message, formatError('versionUnsupported', [String(message.version)]));
  }
  const types = message.supportedConnectionTypes;
  if (!Array.isArray(types) || !types.some((t) => (offered as string[]).includes(t))) {
    return refuse(ctx, message, formatError('connectionTypeUnsupported', offered));
  }
  const hook = bayou.options.authenticate;
  if (hook === undefined) return accept(bayou, message, ctx, true);
  let result: AuthResult | Promise<AuthResult>;
  try {
    result = hook(message, ctx.request);
  } catch (err) {
    bayou.log.warn({ err }, 'authenticate hook threw; handshake denied');
    return deny(ctx, message);
  }
  if (result instanceof Promise) {
    return result.then(
      (r) => accept(bayou, message, ctx, r),
      (err: unknown) => {
        bayou.log.warn({ err }, 'authenticate hook rejected; handshake denied');
        deny(ctx, message);
      },
    );
  }
  return accept(bayou, message, ctx, result);
}

function refuse(ctx: BatchContext, message: Message, error: string): void {
  sendReply(
    ctx,
    null,
    replyTo(message, { successful: false, error, advice: { reconnect: 'none', interval: 0 } }),
  );
}

function deny(ctx: BatchContext, message: Message): void {
  refuse(ctx, message, formatError('handshakeDenied'));
}

function accept(bayou: Bayou, message: Message, ctx: BatchContext, auth: AuthResult): void {
  if (auth === false) {
    deny(ctx, message);
    return;
  }
  const session = bayou.registry.create(ctx.transport);
  session.browserId = ctx.browserId;
  session.handshakeExt = message.ext;
  if (auth !== null && typeof auth === 'object') session.auth = auth;
  if (ctx.socket !== null) {
    session.socket = ctx.socket;
    ctx.bound.push(session);
  }
  ctx.session = session;
  const { interval, timeout, transports } = bayou.options;
  const fields: Record<string, unknown> = {
    version: BAYEUX_VERSION,
    supportedConnectionTypes: transports,
    clientId: session.id,
    successful: true,
    advice: { reconnect: 'retry', interval, timeout },
  };
  if (wantsAck(message.ext)) {
    session.ack = new AckState();
    fields.ext = { ack: { enabled: true, batch: 0 } };
  }
  sendReply(ctx, session, replyTo(message, fields));
  bayou.emit('session', session);
}
