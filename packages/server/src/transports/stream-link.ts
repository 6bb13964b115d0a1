/**
 * One held streaming response (`streaming` or `eventsource`) as the session sees its
 * carrier: the per-turn flusher writes each flush into it as one frame (one chunk), the
 * streaming transport's sweep writes heartbeats into it and recycles it past its size or
 * age, and it lets go of its session when the response ends. Wire format: docs/streaming.md.
 */
import type { Socket } from 'node:net';
import type { Message } from '@bayou/protocol';
import type { Carrier, CarrierKind } from '../session/carrier.js';
import type { Session } from '../session/session.js';
import type { GzipFrames } from './http-compression.js';
import type { ResponseStream } from './http-reply.js';

/** How frames are written: NDJSON lines (`streaming`) or SSE events (`eventsource`). */
export type StreamKind = 'streaming' | 'eventsource';

/**
 * What feeds a stream whose session lives on another node (`cluster/stream-relay.ts`): it
 * polls the owner and writes each answer into the stream.
 */
export interface StreamFeed {
  /** Sends the opening connect (`null` for a stream opened without one), then polls. */
  start(connect: Message | null): Promise<void>;
  /** Lets go of the owner, then ends the stream so that its client opens the next. */
  recycle(): void;
  /** The client went away. */
  closed(): void;
}

/** Makes the feed of a relayed stream, given the stream (while it is constructed). */
export type StreamFeedFactory = (link: StreamLink) => StreamFeed;

/** What every stream of one endpoint shares. */
export interface StreamHost {
  /** Bytes written into one response before it is recycled. */
  readonly maxBytes: number;
  /**
   * Messages written into one response before it is recycled: numbered frames are kept
   * until the next stream's connect reports them, and must stay under the slow-consumer cap.
   */
  readonly maxMessages: number;
  /** The sweep's clock (ms): a write stamps it rather than reading the time. */
  clock: number;
  /** The stream's response ended: its session lives on without a carrier. */
  ended(link: StreamLink): void;
  /** The stream passed its size: recycled once the flush that wrote it is over. */
  full(link: StreamLink): void;
}

/** Lines a client must ignore, written at open so it can tell a proxy that buffers bodies. */
export const STREAM_PADDING = `${' '.repeat(2048)}\n`;
/** An SSE comment of the same size, then how long a browser waits before reopening (ms). */
export const EVENT_SOURCE_RETRY = 1000;
export const EVENT_SOURCE_PADDING = `:${' '.repeat(2048)}\nretry: ${EVENT_SOURCE_RETRY}\n\n`;

/** The most a stream's padding and one frame's own framing take, of either kind. */
export const STREAM_FRAMING = Math.max(STREAM_PADDING.length + 1, EVENT_SOURCE_PADDING.length + 8);

const NEWLINE = Buffer.from('\n');
const CRLF = '\r\n';
const CRLF_BYTES = Buffer.from(CRLF);
const SSE_HEAD = Buffer.from('data: ');
const SSE_TAIL = Buffer.from('\n\n');

/** The last shared payload framed, per kind (one publication reaching many streams in a row). */
const lastPayload: Record<StreamKind, Buffer | null> = { streaming: null, eventsource: null };
const lastChunk: Record<StreamKind, Buffer> = { streaming: NEWLINE, eventsource: SSE_TAIL };

/** One frame of `kind` holding `payload` (a JSON array): an NDJSON line or an SSE `data:` event. */
export function streamChunk(kind: StreamKind, payload: Buffer | string): Buffer | string {
  if (typeof payload === 'string') return kind === 'streaming' ? `${payload}\n` : `data: ${payload}\n\n`;
  if (payload !== lastPayload[kind]) {
    lastPayload[kind] = payload;
    lastChunk[kind] =
      kind === 'streaming' ? Buffer.concat([payload, NEWLINE]) : Buffer.concat([SSE_HEAD, payload, SSE_TAIL]);
  }
  return lastChunk[kind];
}

/** The last shared frame put in a chunk of its own, and that chunk (one write per stream that gets it). */
let lastWireSource: Buffer | null = null;
let lastWire: Buffer = Buffer.alloc(0);

/** `chunk` as one HTTP/1.1 chunk (size, CRLF, data, CRLF), built once for the streams it goes to in a row. */
function wireChunk(chunk: Buffer): Buffer {
  if (chunk !== lastWireSource) {
    lastWireSource = chunk;
    lastWire = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}${CRLF}`), chunk, CRLF_BYTES]);
  }
  return lastWire;
}

export class StreamLink implements Carrier {
  /** How its frames are written, by its kind. */
  readonly format: StreamKind;
  /** Set when another node owns the session: the relay that feeds this stream. */
  readonly relay: StreamFeed | null;
  /** The session it carries, once bound. */
  session: Session | null = null;
  /** Bytes written into the response so far. */
  written = 0;
  /** Messages written into the response so far. */
  messages = 0;
  /** When something was last written (the host's clock). */
  lastWrite: number;
  readonly openedAt: number;
  /** Whether the response was ended (or the client went away). */
  done = false;
  /** Whether it is being recycled (a relayed stream first lets go of its owner node). */
  recycling = false;
  /** The largest frame payload: `streamMaxBytes` less the padding and a frame's own framing. */
  readonly maxFrameBytes: number;

  constructor(
    private readonly out: ResponseStream,
    readonly kind: CarrierKind,
    readonly host: StreamHost,
    now: number,
    /** With gzip (`http-compression.ts`): each write becomes the next piece of the gzip body. */
    private readonly gzip: GzipFrames | null = null,
    /**
     * The connection of a chunked response on the endpoint's direct path: a frame goes to it
     * whole, chunk size and all, in one write (as a WebSocket frame does), rather than through
     * `ServerResponse.write` (a cork, three writes, an uncork); `null` elsewhere (Fastify's
     * path, an HTTP/1.0 response that is not chunked), where the response writes it.
     */
    private readonly socket: Socket | null = null,
    /** For a session of another node: what feeds the stream from there. */
    feed: StreamFeedFactory | null = null,
  ) {
    this.format = kind.name === 'eventsource' ? 'eventsource' : 'streaming';
    const framing = this.format === 'streaming' ? STREAM_PADDING.length + 1 : EVENT_SOURCE_PADDING.length + 8;
    this.maxFrameBytes = host.maxBytes - framing;
    this.openedAt = now;
    this.lastWrite = now;
    this.relay = feed === null ? null : feed(this);
  }

  get bufferedAmount(): number {
    return this.out.writableLength;
  }

  /** Answers the connect held on it: one frame of `messages`. */
  answer(messages: string[]): number {
    return this.sendText(`[${messages.join(',')}]`, messages.length);
  }

  sendText(data: Buffer | string, messages = 1): number {
    const bytes = this.write(streamChunk(this.format, data));
    this.count(messages);
    return bytes;
  }

  /** Counts messages written; past the host's bound the stream is recycled. */
  count(messages: number): void {
    const before = this.messages;
    this.messages += messages;
    if (
      this.messages >= this.host.maxMessages &&
      before < this.host.maxMessages &&
      this.written < this.host.maxBytes
    )
      this.host.full(this);
  }

  /** Writes `chunk` as it is (or gzipped, flushed); returns its size in bytes before compression. */
  write(text: Buffer | string): number {
    const bytes = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (this.done) return bytes;
    const chunk = this.gzip === null ? text : this.gzip.frame(text);
    const socket = this.socket;
    if (socket === null) this.out.write(chunk);
    else if (typeof chunk === 'string') socket.write(`${bytes.toString(16)}\r\n${chunk}\r\n`);
    else socket.write(wireChunk(chunk));
    this.lastWrite = this.host.clock;
    const before = this.written;
    this.written += bytes;
    if (this.written >= this.host.maxBytes && before < this.host.maxBytes) this.host.full(this);
    return bytes;
  }

  /** A line the client ignores, so that neither it nor a proxy takes the stream for dead. */
  heartbeat(now: number): void {
    this.write(this.format === 'streaming' ? '\n' : ':\n\n');
    this.lastWrite = now;
  }

  /** Ends the response (a slow consumer, the session's end, a newer stream): no last frame. */
  end(): void {
    this.finish(undefined);
  }

  /** Writes `last` (if any) and ends the response; the session is let go first. */
  finish(last: string | undefined): void {
    if (this.done) return;
    this.host.ended(this);
    if (last !== undefined) this.write(last);
    this.done = true;
    if (this.gzip !== null) this.out.end(this.gzip.close());
    else this.out.end();
  }
}
