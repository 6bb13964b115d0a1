/**
 * What the protocol handlers know about the frame or request a batch came in, and where
 * their replies go: into the session's queue when the session drains to this very
 * WebSocket (so replies and deliveries keep their order), otherwise into `replies`,
 * which the transport writes back itself at the end of the batch.
 */
import type { Message } from '@bayou/protocol';
import type { RequestInfo, TransportName } from '../options.js';
import type { PendingPoll, Session, SocketLink } from '../session/session.js';

export interface BatchContext {
  readonly transport: TransportName;
  readonly request: RequestInfo;
  /** The WebSocket the batch arrived on; `null` for long-polling. */
  readonly socket: SocketLink | null;
  /** The long-poll request, to be held by a `/meta/connect`; `null` for WebSocket. */
  readonly poll: PendingPoll | null;
  /** Browser id from the `BAYEUX_BROWSER` cookie (long-polling). */
  readonly browserId: string | null;
  /** Replies the transport writes back itself. */
  readonly replies: string[];
  /** The last session a message of this batch named. */
  session: Session | null;
  /** Set when a `/meta/connect` of this batch is held on `poll`. */
  held: boolean;
  /** Sessions a handshake or connect bound to `socket`, for the transport to track. */
  bound: Session[];
}

export function createBatchContext(
  transport: TransportName,
  request: RequestInfo,
  socket: SocketLink | null,
  poll: PendingPoll | null,
  browserId: string | null,
  replies: string[] = [],
): BatchContext {
  return { transport, request, socket, poll, browserId, replies, session: null, held: false, bound: [] };
}

/** Builds a reply carrying the request's `id` and channel. */
export function replyTo(
  message: Pick<Message, 'channel' | 'id'>,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const reply: Record<string, unknown> = { channel: message.channel };
  if (message.id !== undefined) reply.id = message.id;
  return Object.assign(reply, fields);
}

export function sendReply(ctx: BatchContext, session: Session | null, reply: Record<string, unknown>): void {
  sendReplyJson(ctx, session, JSON.stringify(reply));
}

export function sendReplyJson(ctx: BatchContext, session: Session | null, json: string): void {
  // With acknowledgements the queue holds deliveries for the next connect reply only.
  if (session !== null && ctx.socket !== null && session.socket === ctx.socket && session.ack === null) {
    session.enqueue(json);
  } else ctx.replies.push(json);
}
