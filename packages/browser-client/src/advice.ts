/** Reading the server's replies: what its advice asks for, and the error a stop reports. */
import { META_HANDSHAKE, parseError } from '@bayou/protocol';
import { BayouError, ErrorCodes } from './errors.js';
import type { Message } from './types.js';

/** The `reconnect` advice of a reply; without one, `402` means handshake and anything else retry. */
export function reconnectAdvice(reply: Message): 'retry' | 'handshake' | 'none' {
  const advised = reply.advice?.reconnect;
  if (advised === 'retry' || advised === 'handshake' || advised === 'none') return advised;
  return parseError(reply.error)?.code === 402 ? 'handshake' : 'retry';
}

/** A connect reply that lets the session go on (a success advising a handshake ended it). */
export function goesOn(reply: Message): boolean {
  const advised = reply.advice?.reconnect;
  return reply.successful === true && advised !== 'handshake' && advised !== 'none';
}

/** Whether a failed handshake reply means "stop" rather than "try again". */
export function isFinalHandshakeRefusal(reply: Message): boolean {
  return parseError(reply.error)?.code === 403 || reconnectAdvice(reply) === 'none';
}

/** The error the client stops with after `reply`. */
export function stopError(reply: Message): BayouError {
  if (reply.channel === META_HANDSHAKE && parseError(reply.error)?.code === 403) {
    return new BayouError(ErrorCodes.HANDSHAKE_DENIED, `handshake denied: ${reply.error}`, reply);
  }
  return new BayouError(
    ErrorCodes.RECONNECT_NONE,
    `the server advised not to reconnect (${reply.error})`,
    reply,
  );
}

export function isStop(error: unknown): error is BayouError {
  return (
    error instanceof BayouError &&
    (error.code === ErrorCodes.HANDSHAKE_DENIED || error.code === ErrorCodes.RECONNECT_NONE)
  );
}

export function asTransportError(err: unknown): BayouError {
  if (err instanceof BayouError) return err;
  return new BayouError(ErrorCodes.TRANSPORT, err instanceof Error ? err.message : String(err));
}

/** The server answered, but not with success: trying another transport will not help. */
export class Refusal extends Error {
  readonly reply: Message;
  constructor(reply: Message) {
    super(reply.error ?? 'refused');
    this.reply = reply;
  }
}
