/**
 * The client's one error class and its stable codes. Programmer errors (a bad option, an
 * invalid channel) are thrown at once as `TypeError`; everything that happens on the wire
 * rejects a promise, or is emitted as `error`, with a `BayouError`.
 */
import { parseError } from '@bayou/protocol';
import type { Message } from './types.js';

export const ErrorCodes = {
  /** The server answered `successful: false`; `bayeux` holds its error. */
  REJECTED: 'BAYOU_ERR_REJECTED',
  /** The server denied the handshake (`403::handshake_denied`); the client stopped. */
  HANDSHAKE_DENIED: 'BAYOU_ERR_HANDSHAKE_DENIED',
  /** The server advised `reconnect: none`; the client stopped. */
  RECONNECT_NONE: 'BAYOU_ERR_RECONNECT_NONE',
  /** `disconnect()` was called before the server answered. */
  DISCONNECTED: 'BAYOU_ERR_DISCONNECTED',
  /** The offline queue holds `maxQueuedMessages` messages already. */
  QUEUE_FULL: 'BAYOU_ERR_QUEUE_FULL',
  /** A message larger than `maxFrameBytes`: the server would refuse the frame carrying it. */
  TOO_LARGE: 'BAYOU_ERR_TOO_LARGE',
  /** The client and the server share no transport. */
  NO_TRANSPORT: 'BAYOU_ERR_NO_TRANSPORT',
  /** A transport failed (socket closed, request failed, nothing received in time). */
  TRANSPORT: 'BAYOU_ERR_TRANSPORT',
  /**
   * A connection attempt failed on every transport (emitted as `error`, once per reason,
   * while the client keeps trying); `status` is the HTTP status when the server answered one.
   */
  UNREACHABLE: 'BAYOU_ERR_UNREACHABLE',
  /** `connect()` did not connect within `connectDeadline`; the message says the last reason. */
  CONNECT_TIMEOUT: 'BAYOU_ERR_CONNECT_TIMEOUT',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** A Bayeux wire error, `"403:/a:publish_denied"` parsed. */
export interface BayeuxError {
  code: number;
  args: string[];
  message: string;
}

export class BayouError extends Error {
  readonly code: ErrorCode;
  /** The server's error when it gave one. */
  readonly bayeux: BayeuxError | null;
  /** The server's reply when there was one. */
  readonly reply: Message | null;
  /** The HTTP status of a failed request or stream (`403` for a page's origin the server refuses). */
  readonly status: number | null;
  /** The wait in ms an HTTP answer's `Retry-After` asked for (a `503` of a busy server). */
  retryAfter?: number;

  constructor(code: ErrorCode, message: string, reply: Message | null = null, status?: number | null) {
    super(message);
    this.name = 'BayouError';
    this.code = code;
    this.reply = reply;
    this.status = status ?? null;
    this.bayeux = reply ? parseError(reply.error) : null;
  }
}

/** The error for a reply with `successful: false`. */
export function rejection(reply: Message): BayouError {
  return new BayouError(ErrorCodes.REJECTED, `${reply.channel}: ${reply.error ?? 'rejected'}`, reply);
}
