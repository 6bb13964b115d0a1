/**
 * The `streaming` connection type (Bayou HTTP streaming, docs/streaming.md): `POST
 * <path>/stream` with one `/meta/connect` opens a held response of NDJSON lines — a
 * padding line at once, then one JSON array per per-turn flush, heartbeats while silent —
 * recycled past `streamMaxBytes` or `streamMaxAge`. Everything else the session sends
 * goes on ordinary long-polling POSTs. It is an `HttpTransport` of the endpoint
 * (`http-endpoint.ts` reads the body, applies CORS); the `eventsource` type shares the hub.
 */
import type { ServerResponse } from 'node:http';
import { META_CONNECT, type Message } from '@bayou/protocol';
import { createBatchContext } from '../bayeux/batch-context.js';
import type { MaybePromise } from '../engine/engine.js';
import type { ResolvedOptions } from '../options.js';
import { RandomIds } from '../random-ids.js';
import type { CarrierKind, RequestInfo } from '../types.js';
import { STREAMING_CARRIER } from './carrier-kinds.js';
import { gzipFramesFor } from './http-compression.js';
import type { HttpTransport } from './http-endpoint.js';
import type { HttpReply } from './http-reply.js';
import { type HttpPost, pollRequest } from './poll-request.js';
import type { StreamHub } from './stream-hub.js';
import { STREAM_PADDING, type StreamFeedFactory, StreamLink } from './stream-link.js';
import { BATCH_DONE, BATCH_FAILED, runBatch } from './transport.js';
import type { TransportKernel } from './transport-kernel.js';

export type StreamingOptions = Pick<ResolvedOptions, 'path' | 'allowedOrigins' | 'trustClientSession'>;

/** Response headers of a stream: no buffering anywhere on the way, no compression by proxies. */
export const STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/x-ndjson; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

const OPENS_WITH = JSON.stringify({
  error: `a stream opens with a JSON array of exactly one ${META_CONNECT} whose connectionType is "streaming"`,
});

/**
 * A stream request whose session lives on another node: relayed there
 * (`cluster/stream-relay.ts`). Makes the feed the stream is constructed with; the stream's
 * transport then starts it (`startRelay`).
 */
export type StreamRelay = (owner: string, clientId: string, info: RequestInfo) => StreamFeedFactory;

export class StreamingTransport implements HttpTransport {
  private readonly browserIds = new RandomIds(12);

  /** `relay` carries a stream of another node's session to its owner. */
  constructor(
    private readonly kernel: TransportKernel,
    readonly hub: StreamHub,
    private readonly relay: StreamRelay,
  ) {}

  accepts(subpath: string): boolean {
    return subpath === '/stream';
  }

  drain(): void {}

  serve(post: HttpPost): void {
    const poll = pollRequest(STREAMING_CARRIER, post, 1, this.browserIds);
    if (poll === null) return;
    const connect = poll.messages[0] as (Message & { connectionType?: unknown }) | null | undefined;
    if (
      typeof connect !== 'object' ||
      connect === null ||
      connect.channel !== META_CONNECT ||
      connect.connectionType !== STREAMING_CARRIER.name
    ) {
      post.reply.send(400, OPENS_WITH);
      return;
    }
    const target = streamTarget(this.kernel, connect.clientId, STREAMING_CARRIER);
    if (target instanceof Promise) void target.then((owner) => this.open(post, poll, connect, owner));
    else this.open(post, poll, connect, target);
  }

  /** Opens the stream: relayed to `owner`, or served here (`null`). */
  private open(
    post: HttpPost,
    poll: NonNullable<ReturnType<typeof pollRequest>>,
    connect: Message,
    owner: string | null,
  ): void {
    const feed = owner === null ? null : this.relay(owner, String(connect.clientId), poll.info);
    const link = startStream(post.reply, STREAMING_CARRIER, this.hub, STREAM_HEADERS, STREAM_PADDING, feed);
    if (link === null) return;
    if (startRelay(link, this.hub, connect)) return;
    const ctx = createBatchContext(poll.info, link, null, poll.browserId);
    const done = (ok: boolean): void => {
      if (!ok) {
        link.end();
        return;
      }
      const session = ctx.session;
      // A refusal (an unknown session, an extension's verdict) is the stream's only frame.
      if (ctx.replies.length > 0) link.write(`[${ctx.replies.join(',')}]\n`);
      if (session !== null && session.carrier === link) this.hub.attach(link, session);
      else link.end();
    };
    const outcome = runBatch(this.kernel, [connect], ctx, poll.text, 'stream');
    if (outcome === BATCH_DONE || outcome === BATCH_FAILED) done(outcome);
    else void outcome.then(done);
  }
}

/**
 * Where a stream for `clientId` is served: here (`null`: its session is here, was adopted
 * here just now, or is unknown), or the node to relay it to — the one its clientId names,
 * or, for a session handed over at a drain, the one that adopted it (`ClusterView.locate`
 * claims a record waiting in the engine, or finds its adopter).
 */
export function streamTarget(
  kernel: TransportKernel,
  clientId: unknown,
  kind: CarrierKind,
): MaybePromise<string | null> {
  if (kernel.cluster.ownedElsewhere(clientId) === null) return null;
  const located = kernel.cluster.locate(clientId, kind);
  const settle = (where: Awaited<typeof located>): string | null =>
    // `here`: adopted here (now local), or never handed over (still its named node's).
    where === 'here' ? kernel.cluster.ownedElsewhere(clientId) : where.node;
  return located instanceof Promise ? located.then(settle) : settle(located);
}

/**
 * Starts a stream's response (its head and first bytes) and watches for its end; the
 * session is bound later. `null` when this reply cannot hold a stream.
 */
export function startStream(
  reply: HttpReply,
  kind: CarrierKind,
  hub: StreamHub,
  headers: Readonly<Record<string, string>>,
  padding: string,
  feed: StreamFeedFactory | null,
): StreamLink | null {
  const out = reply.openStream(200, headers);
  if (out === null) {
    reply.send(400, '{"error":"a stream cannot be forwarded"}');
    return null;
  }
  const gzip = gzipFramesFor(reply);
  const raw = reply.raw;
  // The direct path hands the response itself: its chunks can go to the socket whole.
  const direct = raw !== null && out === raw && raw.chunkedEncoding ? raw.socket : null;
  const link = new StreamLink(out, kind, hub, hub.clock, gzip, direct, feed);
  // Sent at once, so that the client sees the stream work (or a proxy hold it).
  out.write(gzip === null ? padding : gzip.frame(padding));
  if (raw !== null) watchClose(raw, link);
  return link;
}

/** Starts the feed of a stream relayed from another node (heartbeats and recycling apply); `false` for a stream of this node. */
export function startRelay(link: StreamLink, hub: StreamHub, connect: Message | null): boolean {
  if (link.relay === null) return false;
  hub.track(link);
  void link.relay.start(connect);
  return true;
}

const LINK = Symbol('bayou.stream');
type TaggedResponse = ServerResponse & { [LINK]?: StreamLink };

/** Watches for the client going away, with one module-level handler (no closure per stream). */
function watchClose(raw: ServerResponse, link: StreamLink): void {
  raw.socket?.setNoDelay(true);
  (raw as TaggedResponse)[LINK] = link;
  raw.once('close', onStreamClosed);
}

function onStreamClosed(this: TaggedResponse): void {
  const link = this[LINK];
  this[LINK] = undefined;
  if (link === undefined || link.done) return;
  link.done = true;
  link.host.ended(link);
}
