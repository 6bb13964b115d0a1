/**
 * What the protocol handlers know about the frame or request a batch came in, and where
 * their replies go: into the session's queue when the session drains to this very
 * carrier (so replies and deliveries keep their order), otherwise into `replies`,
 * which the transport writes back itself at the end of the batch.
 */
import type { Message } from '@bayou/protocol';
import type { Carrier, CarrierKind } from '../session/carrier.js';
import type { Session } from '../session/session.js';
import type { PendingPoll } from '../session/session-lifecycle.js';
import type { RequestInfo } from '../types.js';
import { behindInFlight, type PipelineState, replied } from './pipeline.js';

/** Also tracks the batch's publishes in flight (`PipelineState`, `pipeline.ts`). */
export interface BatchContext extends PipelineState {
  /** What the carrier the batch arrived on can do (`request.carrier`). */
  readonly kind: CarrierKind;
  readonly request: RequestInfo;
  /** The carrier the batch arrived on when it pushes (a WebSocket, a stream); `null` for a POST. */
  readonly carrier: Carrier | null;
  /** The long-poll request, to be held by a `/meta/connect`; `null` on a carrier that pushes. */
  readonly poll: PendingPoll | null;
  /** Browser id from the `BAYEUX_BROWSER` cookie (long-polling). */
  readonly browserId: string | null;
  /** Replies the transport writes back itself. */
  readonly replies: string[];
  /** The last session a message of this batch named. */
  session: Session | null;
  /** Set when a `/meta/connect` of this batch is held on `poll`. */
  held: boolean;
  /** Sessions a handshake or connect bound to `carrier`, for the transport to track. */
  bound: Session[];
}

export function createBatchContext(
  request: RequestInfo,
  carrier: Carrier | null,
  poll: PendingPoll | null,
  browserId: string | null,
  replies: string[] = [],
): BatchContext {
  return {
    kind: request.carrier,
    request,
    carrier,
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
 * Routes a serialized reply: in order with deliveries on the session's own carrier, else
 * with the batch. `at` puts it at that place in the queue instead of the end — ahead of
 * what handling the message itself queued (a snapshot, the publisher's own copy).
 */
export function routeReply(ctx: BatchContext, session: Session | null, json: string, at?: number): void {
  if (!behindInFlight(ctx, () => placeReply(ctx, session, json, at))) placeReply(ctx, session, json, at);
}

function placeReply(ctx: BatchContext, session: Session | null, json: string, at?: number): void {
  if (
    session !== null &&
    ctx.carrier !== null &&
    session.carrier === ctx.carrier &&
    session.deliveryMode !== 'connect-reply'
  ) {
    const length = session.queue.length;
    replied(ctx, session, at === undefined || at > length ? length : at);
    if (at === undefined) session.enqueue(json);
    else session.insert(at, json);
  } else ctx.replies.push(json);
}
