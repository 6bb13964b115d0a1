/**
 * Streams across a cluster without sticky sessions: a stream request (`streaming` or
 * `eventsource`) naming a session of another node is **relayed**, not migrated. The node
 * that received it keeps the client's response and long-polls the owner through the
 * session directory — the path long-polling batches already take
 * (`cluster/poll-forwarding.ts`) — one `/meta/connect` (`connectionType: "streaming"`)
 * after another, each held on the owner until it has something to send. Each answer's
 * messages become one frame of the stream; an answer without messages after the connect
 * timeout is the heartbeat's moment. The session never leaves its owner (its clientId
 * names it, and the client's POSTs go there too), so nothing about it moves.
 *
 * The wire is the one of a stream opened on the owner (docs/streaming.md). With numbered
 * frames the owner answers each poll with the frames a stream of its own would get —
 * resends with the numbers they first had, then what is queued, bounded by
 * `streamMaxBytes`, each followed by its ack marker — and the relay writes each as one
 * frame, as it is. Without numbered frames the relay bounds the frames itself. To recycle,
 * or when the client goes away, the relay sends a connect with `timeout: 0`, which answers
 * the held one without messages, only a fresh number for the recycle notice (it waits for
 * the answer in flight and writes what it carries before ending).
 */
import { ACK_MARKER_CHANNEL, EXT_ACK, formatError, META_CONNECT, type Message } from '@bayou/protocol';
import type { ForwardRequest } from '../kernel/node-link.js';
import { recycleFrame } from '../transports/stream-hub.js';
import { type StreamFeed, type StreamLink, streamChunk } from '../transports/stream-link.js';
import type { StreamRelay } from '../transports/streaming.js';
import type { TransportKernel } from '../transports/transport-kernel.js';
import type { RequestInfo } from '../types.js';

type Reply = Record<string, unknown> & {
  channel?: string;
  successful?: boolean;
  ext?: Record<string, unknown>;
};

/** A held connect answered empty this long before its timeout was superseded (another stream took over). */
const EARLY_MS = 1000;

/** The feed of a stream relayed to its session's owner, made as the stream is constructed. */
export function createStreamRelay(kernel: TransportKernel, timeout: number): StreamRelay {
  return (owner, clientId, info) => (link) => new Relay(kernel, owner, link, clientId, info, timeout);
}

class Relay implements StreamFeed {
  private closing = false;
  /** The `id` of the client's opening connect, for a reply made here. */
  private openingId: string | undefined;
  private polling: Promise<void> | null = null;
  private readonly headers: Record<string, string> = {};
  /** The marker of a number the owner gave and no frame used, for the recycle notice. */
  private notice: string | undefined;

  constructor(
    private readonly kernel: TransportKernel,
    private readonly owner: string,
    private readonly link: StreamLink,
    private readonly clientId: string,
    private readonly info: RequestInfo,
    private readonly timeout: number,
  ) {
    for (const [name, value] of Object.entries(info.headers))
      if (typeof value === 'string') this.headers[name] = value;
  }

  /** The opening connect, answered at once by the owner; then the polls. */
  async start(connect: Message | null): Promise<void> {
    const opening = connect ?? {
      channel: META_CONNECT,
      clientId: this.clientId,
      connectionType: 'streaming',
    };
    this.openingId = typeof opening.id === 'string' ? opening.id : undefined;
    const advice = { ...(opening.advice as Record<string, unknown> | undefined), timeout: 0 };
    const replies = await this.ask({ ...opening, connectionType: 'streaming', advice });
    if (replies === null) return;
    const reply = replies.find((m) => m.channel === META_CONNECT);
    // A `streaming` client reads the owner's connect reply as the stream's first frame.
    if (this.link.format === 'streaming' || reply?.successful !== true) this.frame(replies, false);
    if (reply?.successful !== true) {
      this.link.end();
      return;
    }
    this.poll();
  }

  recycle(): void {
    this.closing = true;
    void this.release().then(() =>
      this.link.finish(recycleFrame(this.link.format, this.clientId, this.notice)),
    );
  }

  /** The client went away: the connect held for it on the owner is let go. */
  closed(): void {
    if (this.closing) return;
    this.closing = true;
    void this.release();
  }

  private poll(): void {
    if (this.closing) return;
    const started = Date.now();
    this.polling = this.ask({
      channel: META_CONNECT,
      clientId: this.clientId,
      connectionType: 'streaming',
    }).then((replies) => {
      this.polling = null;
      if (replies === null) return;
      const reply = replies.find((m) => m.channel === META_CONNECT);
      const delivered = this.frame(replies, true);
      const superseded = !delivered && Date.now() - started < this.timeout - EARLY_MS;
      const ended =
        reply?.successful !== true || (reply.advice as { reconnect?: unknown })?.reconnect === 'none';
      if (ended || (superseded && !this.closing)) {
        if (!this.closing) this.link.end();
        return;
      }
      this.poll();
    });
  }

  /** Answers the connect held on the owner (a connect that supersedes it), then waits for its answer. */
  private async release(): Promise<void> {
    const held = this.polling;
    if (held === null) return;
    await this.ask({
      channel: META_CONNECT,
      clientId: this.clientId,
      connectionType: 'streaming',
      advice: { timeout: 0 },
    });
    await held;
  }

  /**
   * Writes what the owner answered: the frames it numbered, each as it is (a marker alone
   * is a number kept for the recycle notice), the rest — without the relay's own connect
   * reply unless `deliveriesOnly` is false — in frames of at most the stream's frame size.
   * Whether there were messages.
   */
  private frame(replies: Reply[], deliveriesOnly: boolean): boolean {
    const reply = replies.find((m) => m.channel === META_CONNECT);
    const messages = deliveriesOnly
      ? replies.filter((m) => m !== reply || reply.successful !== true)
      : replies;
    let start = 0;
    let delivered = false;
    for (let i = 0; i < messages.length; i++) {
      if ((messages[i] as Reply).channel !== ACK_MARKER_CHANNEL) continue;
      const marker = JSON.stringify(messages[i]);
      if (i === start) this.notice = marker;
      else {
        this.write(messages.slice(start, i), marker);
        this.notice = undefined;
        delivered = true;
      }
      start = i + 1;
    }
    const rest = start === 0 ? messages : messages.slice(start);
    if (rest.length === 0) return delivered;
    // An owner that numbers its answer as one batch (before the relayed wire was the stream's).
    const batch = deliveriesOnly ? reply?.ext?.[EXT_ACK] : undefined;
    if (typeof batch === 'number')
      this.write(rest, `{"channel":"${ACK_MARKER_CHANNEL}","ext":{"${EXT_ACK}":${batch}}}`);
    else this.bounded(rest);
    return true;
  }

  /** Unnumbered messages in as many frames as the stream's frame size takes (a message never split). */
  private bounded(messages: Reply[]): void {
    const limit = this.link.maxFrameBytes;
    let parts: string[] = [];
    let size = 2;
    for (const message of messages) {
      const json = JSON.stringify(message);
      const bytes = Buffer.byteLength(json) + 1;
      if (parts.length > 0 && size + bytes > limit) {
        this.writeParts(parts, undefined);
        parts = [];
        size = 2;
      }
      parts.push(json);
      size += bytes;
    }
    this.writeParts(parts, undefined);
  }

  private write(messages: Reply[], marker: string | undefined): void {
    this.writeParts(
      messages.map((m) => JSON.stringify(m)),
      marker,
    );
  }

  /** One frame: `parts` (serialized messages), then `marker` if numbered. */
  private writeParts(parts: string[], marker: string | undefined): void {
    const count = parts.length;
    if (marker !== undefined) parts.push(marker);
    this.link.write(streamChunk(this.link.format, `[${parts.join(',')}]`));
    this.link.count(count);
  }

  /** One batch to the owner; `null` (the stream ended) when it cannot be reached. */
  private async ask(message: Record<string, unknown>): Promise<Reply[] | null> {
    const request: ForwardRequest = {
      body: JSON.stringify([message]),
      url: this.info.url,
      headers: this.headers,
      remoteAddress: this.info.ip ?? this.info.remoteAddress,
      browserId: this.info.browserId ?? null,
    };
    try {
      if (!(await this.kernel.cluster.isAlive(this.owner))) return await this.ownerGone();
      const answer = await this.kernel.cluster.forward(this.owner, request);
      if (answer.status !== 200) throw new Error(`owner answered ${answer.status}`);
      return JSON.parse(answer.body) as Reply[];
    } catch (err) {
      // The owner died with the connect held there: its sessions are unknown now.
      if (this.kernel.cluster.engineReady() && !(await this.ownerAlive())) return await this.ownerGone();
      this.kernel.log.warn({ err, owner: this.owner }, 'relaying a stream failed; ending it');
      if (!this.closing) this.link.end();
      return null;
    }
  }

  private async ownerAlive(): Promise<boolean> {
    try {
      return await this.kernel.cluster.isAlive(this.owner);
    } catch {
      return true;
    }
  }

  /**
   * The owner is gone. A session it handed over at its drain lives on (adopted here now, or
   * by another node): the stream ends and its client opens it again, where the session is
   * found. Otherwise the session is unknown.
   */
  private async ownerGone(): Promise<null> {
    let moved = false;
    try {
      const where = await this.kernel.cluster.locate(this.clientId, this.link.kind);
      moved = where !== 'here' || this.kernel.sessions.find(this.clientId) !== undefined;
    } catch {
      // Not found: answered as unknown.
    }
    if (!moved) return this.unknown();
    if (!this.closing) this.link.end();
    return null;
  }

  /** The owner is dead: its sessions are unknown (the client handshakes again elsewhere). */
  private unknown(): null {
    if (!this.closing) {
      // As this node answers a session it does not know (the opening connect's id, or Faye's form).
      const reply =
        this.link.format === 'eventsource'
          ? { channel: META_CONNECT, clientId: this.clientId }
          : { channel: META_CONNECT, ...(this.openingId === undefined ? {} : { id: this.openingId }) };
      this.frame(
        [{ ...reply, successful: false, error: formatError('sessionUnknown'), advice: UNKNOWN_ADVICE }],
        false,
      );
      this.link.end();
    }
    return null;
  }
}

const UNKNOWN_ADVICE = Object.freeze({ reconnect: 'handshake', interval: 0 });
