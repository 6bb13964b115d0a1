/**
 * Errors of `@bayou/server`. Wire errors for clients are Bayeux strings built with
 * `formatError` from `@bayou/protocol`; this file holds the programmer errors thrown at
 * setup (each with a stable code) and the error a service handler throws to answer with
 * a Bayeux error of its choosing.
 */

export const ErrorCodes = {
  /** An option key that does not exist. */
  BAYOU_ERR_UNKNOWN_OPTION: 'BAYOU_ERR_UNKNOWN_OPTION',
  /** An option with a value of the wrong type or out of range. */
  BAYOU_ERR_INVALID_OPTION: 'BAYOU_ERR_INVALID_OPTION',
  /** A channel name that breaks the grammar, or of the wrong kind for the call. */
  BAYOU_ERR_INVALID_CHANNEL: 'BAYOU_ERR_INVALID_CHANNEL',
  /** A second service handler for the same channel. */
  BAYOU_ERR_DUPLICATE_SERVICE: 'BAYOU_ERR_DUPLICATE_SERVICE',
  /** A config file that cannot be read or parsed. */
  BAYOU_ERR_CONFIG: 'BAYOU_ERR_CONFIG',
  /** The engine could not start (e.g. Redis unreachable when the server starts). */
  BAYOU_ERR_ENGINE: 'BAYOU_ERR_ENGINE',
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

export class BayouError extends TypeError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'BayouError';
    this.code = code;
  }
}

/**
 * Thrown (or rejected with) by a service handler, a hook (`authenticate`, `canSubscribe`,
 * `canPublish`) or an extension to answer the message with a specific Bayeux error
 * string, e.g. `new BayeuxReplyError('403:/chat:muted')`. Anything else they throw is
 * logged and answered with a generic `500::internal_error` (`500:<channel>:service_failed`
 * for services). A subclass may carry `advice` for the reply (see `HandshakeDeniedError`).
 */
export class BayeuxReplyError extends Error {
  readonly bayeuxError: string;
  constructor(bayeuxError: string) {
    super(bayeuxError);
    this.name = 'BayeuxReplyError';
    this.bayeuxError = bayeuxError;
  }
}

/** Why a handshake token was refused; `expired` is the only one a client can fix by itself. */
export type TokenProblem = 'missing' | 'malformed' | 'invalid' | 'expired';

/**
 * Thrown (or rejected) by the token `authenticate` hook: the handshake is denied with
 * `bayeuxError` and the reply carries `advice` — `reconnect: 'handshake'` for an expired
 * token (the client fetches a new one and handshakes again), `'none'` otherwise.
 * `problem` may go to the client in `ext.auth.error` and to metrics.
 */
export class HandshakeDeniedError extends BayeuxReplyError {
  readonly advice: { reconnect: 'none' | 'handshake'; interval: number };
  readonly problem: TokenProblem;
  constructor(problem: TokenProblem, detail: string) {
    super('403::handshake_denied');
    this.name = 'HandshakeDeniedError';
    this.problem = problem;
    this.advice = { reconnect: problem === 'expired' ? 'handshake' : 'none', interval: 0 };
    this.message = `handshake denied: ${detail}`;
  }
}
