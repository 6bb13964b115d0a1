/**
 * The streaming transport (`streaming`). A `/meta/connect` opens a stream: `POST
 * <url>/stream`, whose response stays open and carries, one line each, the connect's reply
 * and then every delivery (a line is a JSON array of messages, as a long-poll response
 * holds; blank lines are padding and heartbeats). Everything else goes on ordinary
 * long-polling POSTs. It is `fetch` read as a stream, so headers, cookies or none work as
 * for long-polling, and one response carries a session's deliveries until the server
 * recycles it.
 *
 * Stream-sense: the server writes a padding line at once. When no byte of the body has
 * come within `streamSenseTimeout` ms a proxy is holding the response back; the stream is
 * given up with `buffered` set, and the connection falls back to long-polling.
 */
import { META_CONNECT } from '@bayou/protocol';
import { BayouError, ErrorCodes } from '../errors.js';
import type { Message } from '../types.js';
import { type Abort, httpFailure, LongPollingTransport, post } from './long-polling.js';
import { parseMessages, type TransportFactory } from './transport.js';

function failure(message: string, status: number | null = null): BayouError {
  return new BayouError(ErrorCodes.TRANSPORT, `streaming: ${message}`, null, status);
}

/** Where streams open: `http://h/bayeux?x` → `http://h/bayeux/stream?x`. */
export function streamUrl(url: string): string {
  return url.replace(/\/?([?#]|$)/, '/stream$1');
}

/** One open stream. */
interface Stream {
  readonly controller: Abort;
  /** The sense timer until the first bytes, then the silence timer. */
  timer?: ReturnType<typeof setTimeout>;
  /** The server ended it; `ended` is called once, with the last connect reply. */
  clean?: boolean;
  ended?: (last: Message | null) => void;
  last?: Message;
}

class StreamingTransport extends LongPollingTransport {
  override readonly name = 'streaming';
  buffered = false;
  private stream: Stream | null = null;
  /** The server's heartbeat interval: the `timeout` its connect replies advise. */
  private heartbeat = 30000;

  override send(messages: Message[]): void {
    const connect = messages.find((m) => m.channel === META_CONNECT);
    const rest = connect ? messages.filter((m) => m !== connect) : messages;
    if (rest.length > 0) super.send(rest);
    if (connect) this.read(connect);
  }

  streamEnd(ended: (last: Message | null) => void): void {
    const stream = this.stream;
    if (stream?.clean) queueMicrotask(() => ended(stream.last ?? null));
    else if (stream) stream.ended = ended;
  }

  override close(): void {
    clearTimeout(this.stream?.timer);
    super.close();
  }

  /**
   * Opens a stream with `connect` and reads it to its end. A stream open before is
   * superseded, not dropped: the server ends it once the new one has the session, and what
   * it wrote there until then is still read (a renewal reports no frame, so nothing is sent
   * twice); it is aborted if the server has not ended it within `connectTimeout`.
   */
  private async read(connect: Message): Promise<void> {
    const fetch = this.fetch;
    const previous = this.stream;
    if (previous && !previous.clean) {
      this.wait(previous, this.context.connectTimeout, () => previous.controller.abort());
    }
    const stream: Stream = { controller: new AbortController() };
    this.stream = stream;
    if (this.done || !fetch) {
      queueMicrotask(() => this.fail(stream, failure('closed')));
      return;
    }
    this.inFlight.add(stream.controller);
    this.wait(stream, this.context.streamSenseTimeout, () => {
      this.buffered = true;
      this.fail(stream, failure(`no byte within ${this.context.streamSenseTimeout} ms: buffered by a proxy`));
    });
    try {
      const response = await fetch(streamUrl(this.context.url), post([connect], stream.controller));
      if (!response.ok) throw await httpFailure(response, failure);
      const reader = response.body?.getReader();
      if (!reader) throw failure('no response body stream');
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (this.done) {
          reader.cancel().catch(() => {});
          return;
        }
        if (done) break;
        if (this.stream === stream) {
          this.wait(stream, this.heartbeat + this.context.connectTimeout, () =>
            this.fail(stream, failure('silent past the heartbeat')),
          );
        }
        text += decoder.decode(value, { stream: true });
        let start = 0;
        for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
          const line = text.slice(start, end);
          start = end + 1;
          if (line.trim() !== '') this.frame(line, stream);
          if (this.done) return;
        }
        text = text.slice(start);
      }
      this.ended(stream);
    } catch (err) {
      this.fail(stream, err instanceof BayouError ? err : failure(String(err)));
    }
  }

  private wait(stream: Stream, ms: number, then: () => void): void {
    clearTimeout(stream.timer);
    stream.timer = setTimeout(then, ms);
  }

  private frame(line: string, stream: Stream): void {
    let messages: Message[];
    try {
      messages = parseMessages(line);
    } catch {
      this.fail(stream, failure('bad frame'));
      return;
    }
    for (const m of messages) {
      if (m.channel !== META_CONNECT) continue;
      stream.last = m;
      const timeout = m.advice?.timeout;
      if (typeof timeout === 'number' && timeout >= 0) this.heartbeat = timeout;
    }
    this.context.onMessages(messages, this);
  }

  /** The server ended the stream: the next connect opens the next one (unless one did). */
  private ended(stream: Stream): void {
    clearTimeout(stream.timer);
    stream.clean = true;
    this.inFlight.delete(stream.controller);
    if (this.draining && this.inFlight.size === 0) this.close();
    if (this.stream === stream) stream.ended?.(stream.last ?? null);
  }

  private fail(stream: Stream, error: BayouError): void {
    clearTimeout(stream.timer);
    stream.controller.abort();
    this.inFlight.delete(stream.controller);
    if (this.stream === stream && !this.done) this.context.onFailure(this, error);
    else if (this.draining && this.inFlight.size === 0) this.close();
  }
}

/** The `streaming` transport: `fetch` with a streamed response body (global or the `fetch` option). */
export const streaming: TransportFactory = {
  name: 'streaming',
  create: (context) => new StreamingTransport(context),
};
