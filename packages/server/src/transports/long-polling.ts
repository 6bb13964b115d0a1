/**
 * The long-polling transport: each POST's batch is run and answered once. A
 * `/meta/connect` in the batch may hold the response; it is then answered by the flusher
 * or the sweep through `LongPollExchange.respond`. It answers every POST to the endpoint no
 * other HTTP transport takes (`http-endpoint.ts` brings them, read, either way they came).
 *
 * A batch naming a session of another live node is forwarded to that node
 * (`cluster/poll-forwarding.ts`): no sticky sessions are needed.
 */
import type { ServerResponse } from 'node:http';
import { type BatchContext, createBatchContext } from '../bayeux/batch-context.js';
import { PollForwarder, runForwarded } from '../cluster/poll-forwarding.js';
import type { ForwardRequest, ForwardResponse } from '../kernel/node-link.js';
import type { ResolvedOptions } from '../options.js';
import { RandomIds } from '../random-ids.js';
import type { Session } from '../session/session.js';
import type { PendingPoll } from '../session/session-lifecycle.js';
import { LONG_POLLING_CARRIER } from './carrier-kinds.js';
import type { HttpTransport } from './http-endpoint.js';
import type { HttpReply } from './http-reply.js';
import { type HttpPost, type PollRequest, pollRequest } from './poll-request.js';
import { answered, asideConnectId, connectCame } from './resent-connects.js';
import { BATCH_DONE, BATCH_FAILED, runBatch } from './transport.js';
import type { TransportKernel } from './transport-kernel.js';

const EXCHANGE = Symbol('bayou.exchange');
type TaggedResponse = ServerResponse & { [EXCHANGE]?: LongPollExchange };

type LongPollOptions = Pick<ResolvedOptions, 'maxBatchMessages'>;

/**
 * A handshake the node did not admit (draining, past `maxHandshakeRate`: `node_busy`) says
 * when to come back as HTTP `Retry-After` too (whole seconds, rounded up), besides its advice.
 */
function retryAfter(replies: readonly string[], reply: HttpReply): void {
  for (const r of replies) {
    if (!r.includes(':node_busy"')) continue;
    const interval = Number(/"interval":(\d+)/.exec(r)?.[1] ?? 1000);
    reply.header('retry-after', String(Math.max(1, Math.ceil(interval / 1000))));
    return;
  }
}

/** One long-poll in flight: the batch's replies, then one answer. */
export class LongPollExchange implements PendingPoll {
  readonly kind = LONG_POLLING_CARRIER;
  readonly replies: string[] = [];
  done = false;
  session: Session | null = null;

  constructor(
    private readonly reply: HttpReply,
    readonly kernel: TransportKernel,
    /** The `id` of the batch's EventSource connect, if it has one (`resent-connects.ts`). */
    readonly asideId: string | null = null,
    /** When its batch reached the node its client sent it to (`PollRequest.arrivedAt`). */
    readonly seq = 0,
  ) {}

  /** Answers the held connect: the batch's replies, then `messages` (its reply last), as the response; its size in bytes. */
  answer(messages: string[]): number {
    if (this.done) return 0;
    this.done = true;
    // The connect reply stays last: only the deliveries ahead of it go back.
    if (this.clientGone(this.session, messages, 1)) return 0;
    return this.send(messages);
  }

  private send(messages: string[]): number {
    const all = this.replies.length > 0 ? this.replies.concat(messages) : messages;
    const body = `[${all.join(',')}]`;
    const bytes = Buffer.byteLength(body);
    if (this.replies.length > 0) retryAfter(this.replies, this.reply);
    this.reply.send(200, body, bytes);
    return bytes;
  }

  /** Answers a batch that held no connect (the replies and `messages`, what rides along), counted here. */
  respond(messages: string[], session: Session | null): void {
    if (this.done) return;
    this.done = true;
    if (this.clientGone(session, messages)) return;
    if (session !== null) answered(session, this.asideId, this.seq, messages);
    const replies = this.replies.length;
    const bytes = this.send(messages);
    if (bytes > 0) this.kernel.outbound.countResponse(replies + messages.length, bytes);
  }

  /**
   * Whether the client went away before its answer (`messages`, the last `replies` of them
   * replies, not deliveries) (it gave up waiting: Faye abandons a
   * connect after 1.2 × its `retry` when told `timeout: 0`, and a batch may wait longer than
   * that for a claim, a hook or a node). The deliveries the answer would have carried go back
   * ahead of the session's queue for its next request or stream: written into a closed
   * response, they would be lost to a client without acknowledgements. A session whose frames
   * the ack extension numbers (`numbered`, `connect-reply`) gets its unacknowledged ones
   * again from that extension.
   */
  private clientGone(session: Session | null, messages: string[], replies = 0): boolean {
    if (this.reply.raw?.destroyed !== true) return false;
    // Sliced only then: an answer to a client still there goes out as it is (requeue copies).
    if (session !== null && session.deliveryMode === 'push')
      session.requeue(replies === 0 ? messages : messages.slice(0, messages.length - replies));
    return true;
  }

  fail(status: number, error: string): void {
    if (this.done) return;
    this.done = true;
    this.reply.send(status, JSON.stringify({ error }));
  }

  /** Watches for the client going away while the connect is held. */
  hold(session: Session): void {
    this.session = session;
    const raw = this.reply.raw;
    if (raw === null) return;
    (raw as TaggedResponse)[EXCHANGE] = this;
    raw.once('close', onPollClosed);
  }
}

function onPollClosed(this: TaggedResponse): void {
  const exchange = this[EXCHANGE];
  if (exchange === undefined || exchange.done || exchange.session === null) return;
  // Queued messages stay with the session for its next connect.
  exchange.done = true;
  exchange.kernel.connects.pollAborted(exchange.session, exchange);
}

/** The long-polling transport: the endpoint's catch-all, and where batches forwarded to this node run. */
export interface LongPollingTransport extends HttpTransport {
  /** Runs a batch another node forwarded for a session of this one (handed to the node at its start). */
  forwarded(request: ForwardRequest): Promise<ForwardResponse>;
}

/** The long-polling transport, as the endpoint's catch-all `HttpTransport`. */
export function createLongPolling(kernel: TransportKernel, options: LongPollOptions): LongPollingTransport {
  const run = (poll: PollRequest): void => runPoll(kernel, poll);
  const forwarder = new PollForwarder(kernel, run);
  const browserIds = new RandomIds(12);
  return {
    forwarded: (request) =>
      runForwarded(request, options.maxBatchMessages, run, (id) => kernel.cluster.handedOver(id)),
    accepts: () => true,
    serve(post: HttpPost): void {
      const poll = pollRequest(LONG_POLLING_CARRIER, post, options.maxBatchMessages, browserIds);
      if (poll === null) return;
      const owner = forwarder.ownerOf(poll);
      if (owner !== null) forwarder.forward(owner, poll);
      else runPoll(kernel, poll);
    },
    drain: () => forwarder.drain(),
  };
}

/** Runs a batch on this node: hold its connect, or answer with the replies and what is queued. */
export function runPoll(kernel: TransportKernel, poll: PollRequest): void {
  const exchange = new LongPollExchange(poll.reply, kernel, asideConnectId(poll.messages), poll.arrivedAt);
  // Handlers write into the exchange's replies, so a held connect answers with them.
  const ctx = createBatchContext(poll.info, null, exchange, poll.browserId, exchange.replies);
  const outcome = runBatch(kernel, poll.messages, ctx, poll.text, 'long-poll');
  if (outcome === BATCH_DONE) finishPoll(exchange, ctx);
  else if (outcome === BATCH_FAILED) exchange.fail(500, 'internal error');
  else
    outcome.then((done) => {
      if (done) finishPoll(exchange, ctx);
      else exchange.fail(500, 'internal error');
    });
}

/** After the batch: hold the connect, or answer with the replies and what is queued. */
function finishPoll(exchange: LongPollExchange, ctx: BatchContext): void {
  if (ctx.held && ctx.session?.held?.poll === exchange) exchange.hold(ctx.session);
  // Queued deliveries ride along, unless they travel only in connect replies or on a stream.
  else if (!ctx.held) {
    const session = ctx.session;
    // An EventSource connect sent again: its first answer was not read (`resent-connects.ts`);
    // or the attempt given up, finishing after the one sent again.
    const carry = session !== null && connectCame(session, exchange.asideId, exchange.seq);
    exchange.respond(carry && ridesAlong(session) ? session.drain() : [], session);
  }
}

/**
 * Whether what `session` has queued may leave in the answer to any of its POSTs: not when a
 * stream carries it, open here or relayed from another node (whose polls hold its connect).
 */
function ridesAlong(session: Session): boolean {
  return (
    session.deliveryMode !== 'connect-reply' &&
    session.carrier?.kind.keepsSession !== true &&
    !(session.carrierKind.keepsSession && session.carrierKind.opensWithConnect)
  );
}
