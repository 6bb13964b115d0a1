/**
 * Calling application code (hooks, services, listeners) from the protocol path: whatever
 * it throws or rejects becomes a Bayeux error string for that message — the one a
 * `BayeuxReplyError` carries, or a generic `500::internal_error` (logged) — and never
 * escapes into a socket handler.
 */
import { formatError } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { MaybePromise } from '../engine/engine.js';
import { BayeuxReplyError } from '../errors.js';

export type HookOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: string; advice?: Readonly<Record<string, unknown>> };

/** The advice a `BayeuxReplyError` subclass carries (e.g. `reconnect: 'handshake'` for an expired token). */
function adviceOf(err: unknown): Readonly<Record<string, unknown>> | undefined {
  const advice = err instanceof BayeuxReplyError ? (err as { advice?: unknown }).advice : undefined;
  return typeof advice === 'object' && advice !== null ? (advice as Record<string, unknown>) : undefined;
}

function failure<T>(err: unknown, log: FastifyBaseLogger, what: string): HookOutcome<T> {
  const advice = adviceOf(err);
  const error = errorFor(err, log, what);
  return advice === undefined ? { ok: false, error } : { ok: false, error, advice };
}

export function errorFor(err: unknown, log: FastifyBaseLogger, what: string): string {
  if (err instanceof BayeuxReplyError) return err.bayeuxError;
  log.error({ err }, `${what} failed`);
  return formatError('internalError');
}

/** Runs `call`, mapping a throw or a rejection to an error outcome. */
export function guard<T>(
  call: () => MaybePromise<T>,
  log: FastifyBaseLogger,
  what: string,
): MaybePromise<HookOutcome<T>> {
  let result: MaybePromise<T>;
  try {
    result = call();
  } catch (err) {
    return failure(err, log, what);
  }
  if (result instanceof Promise) {
    return result.then(
      (value): HookOutcome<T> => ({ ok: true, value }),
      (err: unknown): HookOutcome<T> => failure(err, log, what),
    );
  }
  return { ok: true, value: result };
}

/** Continues with `next` once `value` is there, synchronously when it already is. */
export function andThen<T, R>(value: MaybePromise<T>, next: (v: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
