/**
 * What the protocol handlers know about the frame or request a batch came in, and where
 * their replies go: into the session's queue when the session drains to this very
 * WebSocket (so replies and deliveries keep their order), otherwise into `replies`,
 * which the transport writes back itself at the end of the batch.
 */
import type { Message } from '@bayou/protocol';
import type { Session } from '../session/session.js';
import type { PendingPoll, SocketLink } from '../session/session-lifecycle.js';
import type { RequestInfo, TransportName } from '../types.js';
import { behindInFlight, type PipelineState, replied } from './pipeline.js';

/** Also tracks the batch's publishes in flight (`PipelineState`, `pipeline.ts`). */
export interface BatchContext extends PipelineState {
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
  return {
    transport,
    request,
    socket,
    poll,
    browserId,
    replies,
    session: null,
    held: false,
    bound: [],
    inFlight: null,
    settling: false,
    repliedTo: null,
    repliedAt: 0,
    behind: null,
    draining: false,
  };
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

/**
 * Routes a serialized reply: in order with deliveries on the session's own socket, else
 * with the batch. `at` puts it at that place in the queue instead of the end — ahead of
 * what handling the message itself queued (a snapshot, the publisher's own copy).
 */
export function routeReply(ctx: BatchContext, session: Session | null, json: string, at?: number): void {
  if (!behindInFlight(ctx, () => placeReply(ctx, session, json, at))) placeReply(ctx, session, json, at);
}

function placeReply(ctx: BatchContext, session: Session | null, json: string, at?: number): void {
  if (
    session !== null &&
    ctx.socket !== null &&
    session.socket === ctx.socket &&
    session.deliveryMode !== 'connect-reply'
  ) {
    const length = session.queue.length;
    replied(ctx, session, at === undefined || at > length ? length : at);
    if (at === undefined) session.enqueue(json);
    else session.insert(at, json);
  } else ctx.replies.push(json);
}
