/**
 * Errors of `@bayou/server`. Wire errors for clients are Bayeux strings built with
 * `formatError` from `@bayou/protocol`; this file holds the programmer errors thrown at
 * setup (`BayouConfigError`, each with a stable code), the engine's failure to start
 * (`BayouEngineError`) and the error a service handler throws to answer with a Bayeux
 * error of its choosing.
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
/** The codes of programmer errors: every code but `BAYOU_ERR_ENGINE`. */
export type ConfigErrorCode = Exclude<ErrorCode, 'BAYOU_ERR_ENGINE'>;

/**
 * Any error `@bayou/server` throws with a stable `code`. `instanceof BayouError` is true for
 * a `BayouConfigError` (a `TypeError`, which JavaScript's single inheritance keeps out of
 * this class's chain) and a `BayouEngineError`, so code written when this was the only
 * class keeps catching both.
 */
export class BayouError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BayouError';
    this.code = code;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class on the right of `instanceof`: subclasses inherit this method, and
    // only `BayouError` itself may widen the check.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is what is being tested
    if (this === BayouError && value instanceof BayouConfigError) return true;
    // biome-ignore lint/complexity/noThisInStatic: the receiver is what is being tested
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/**
 * A programmer error, thrown at setup: an unknown or invalid option, a bad channel for the
 * call, a duplicate service, an unreadable config file. A `TypeError`, as Node and `ws`
 * throw for bad arguments; fix the call, do not retry it.
 */
export class BayouConfigError extends TypeError {
  readonly code: ConfigErrorCode;
  constructor(code: ConfigErrorCode, message: string) {
    super(message);
    this.name = 'BayouConfigError';
    this.code = code;
  }
}

/**
 * An operational failure at start: the engine could not start (Redis unreachable when the
 * server starts). Not a programmer error: the same call may succeed once Redis answers.
 */
export class BayouEngineError extends BayouError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BAYOU_ERR_ENGINE', message, options);
    this.name = 'BayouEngineError';
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
