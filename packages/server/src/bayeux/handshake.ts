/** `/meta/handshake`: version and connection types, the `authenticate` hook, a new session. */
import { BAYEUX_VERSION, BAYOU_EXT, EXT_HEARTBEAT, formatError, type Message } from '@bayou/protocol';
import { andThen, guard, type HookOutcome } from '../kernel/hooks.js';
import type { BatchContext } from './batch-context.js';
import type { KernelApi } from './kernel-api.js';

type AuthResult = boolean | undefined | Record<string, unknown>;
type HandshakeKernel = Pick<
  KernelApi,
  'options' | 'taps' | 'log' | 'reply' | 'createSession' | 'guards' | 'sessions' | 'stats'
>;

export function handleHandshake(
  k: HandshakeKernel,
  message: Message,
  ctx: BatchContext,
): void | Promise<void> {
  const offered = k.options.transports;
  if (typeof message.version !== 'string' || !message.version.startsWith('1.')) {
    return refuse(k, ctx, message, formatError('versionUnsupported', [String(message.version)]));
  }
  const types = message.supportedConnectionTypes;
  if (!Array.isArray(types) || !types.some((t) => (offered as string[]).includes(t))) {
    return refuse(k, ctx, message, formatError('connectionTypeUnsupported', offered));
  }
  // A node draining or past its handshake rate admits no new session now: come back later.
  const busy = k.taps.admission?.handshake() ?? null;
  if (busy !== null) {
    const advice = { reconnect: 'handshake', interval: busy.interval };
    return refuse(k, ctx, message, formatError('nodeBusy', [busy.args]), advice);
  }
  const consoleAuth = k.taps.consoleGate?.handshake(message) ?? null;
  if (consoleAuth !== null) return accept(k, message, ctx, consoleAuth);
  const hook = k.options.authenticate;
  if (hook === undefined) return accept(k, message, ctx, true);
  const outcome = guard(() => hook(message, ctx.request), k.log, 'authenticate hook');
  const decide = (o: HookOutcome<AuthResult>): void => {
    if (o.ok) accept(k, message, ctx, o.value);
    // A denial says whether to try again (an expired token); a failure of ours invites a retry.
    else refuse(k, ctx, message, o.error, o.advice ?? (o.error.startsWith('403:') ? NONE : RETRY));
  };
  const done = andThen(outcome, decide);
  return done instanceof Promise ? done : undefined;
}

const NONE = Object.freeze({ reconnect: 'none', interval: 0 });
const RETRY = Object.freeze({ reconnect: 'handshake', interval: 1000 });

function refuse(
  k: HandshakeKernel,
  ctx: BatchContext,
  message: Message,
  error: string,
  advice: Readonly<Record<string, unknown>> = NONE,
): void {
  k.stats.handshakeDone(error.startsWith('403:') ? 'denied' : 'failed');
  k.reply(ctx, null, message, { successful: false, error, advice });
}

function accept(k: HandshakeKernel, message: Message, ctx: BatchContext, auth: AuthResult): void {
  if (auth === false) {
    refuse(k, ctx, message, formatError('handshakeDenied'));
    return;
  }
  const session = k.createSession(ctx, message, auth !== null && typeof auth === 'object' ? auth : null);
  const { interval, timeout, transports } = k.options;
  // Listeners run first, so one that throws fails the handshake; what they queue follows the reply.
  if (
    !k.guards.emitSafe((e) => {
      e.emit('session:created', session);
      e.emit('session', session);
    })
  ) {
    k.sessions.remove(session, 'error');
    refuse(k, ctx, message, formatError('internalError'), RETRY);
    return;
  }
  const fields: Record<string, unknown> = {
    version: BAYEUX_VERSION,
    supportedConnectionTypes: transports,
    clientId: session.id,
    successful: true,
    advice: { reconnect: 'retry', interval, timeout },
  };
  if (grantsHeartbeat(k.options, message)) {
    session.heartbeat = true;
    fields.ext = { [BAYOU_EXT]: { [EXT_HEARTBEAT]: k.options.heartbeatInterval } };
  }
  k.stats.handshakeDone('accepted');
  k.reply(ctx, session, message, fields, 0);
}

/**
 * Whether the session of `message` gets the idle heartbeat: it asks (`ext.bayou.heartbeat:
 * true`), the heartbeat is on and WebSockets are served (only a WebSocket pings).
 */
function grantsHeartbeat(options: HandshakeKernel['options'], message: Message): boolean {
  if (options.heartbeatInterval <= 0 || !options.transports.includes('websocket')) return false;
  const bayou = message.ext?.[BAYOU_EXT];
  return (
    typeof bayou === 'object' && bayou !== null && (bayou as Record<string, unknown>)[EXT_HEARTBEAT] === true
  );
}
