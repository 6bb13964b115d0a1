/**
 * Bayeux over a held streamed response, for many simulated clients: Bayou's `streaming`
 * connection type (`POST <path>/stream`, one frame per line) and the `eventsource` one of
 * Faye (`GET <path>/<clientId>` as `text/event-stream`, plus a `/meta/connect` POST on the
 * advised interval). Each client has its own raw connection for its stream, opened again at
 * once when the server ends it (the size/age recycle); handshakes, subscribes and publishes
 * are pipelined over a small shared pool, as in the lean long-polling driver.
 */
import { META_CONNECT, META_DISCONNECT, META_HANDSHAKE, META_SUBSCRIBE } from '@bayou/protocol';
import {
  type Deferred,
  type Driver,
  type DriverOptions,
  deferred,
  handshakeExt,
  handshakeRetry,
  toHttpUrl,
} from './driver.js';
import { HttpConnection, type HttpResponse } from './http-connection.js';
import { type BodyReader, NdjsonReader, SseReader } from './stream-body.js';
import { StreamConnection, type StreamHandler } from './stream-connection.js';
import { deliverMessages, parseFrame, type StreamKind, streamEndpoint } from './stream-frames.js';

/** Shared connections for everything but the streams. */
const POOL_SIZE = 16;
/** The eventsource connect loop never runs faster than this, whatever the advice says. */
const MIN_CONNECT_INTERVAL = 1000;

interface StreamClient {
  index: number;
  clientId: string;
  cookie: string | undefined;
  stream: StreamConnection<StreamClient>;
  reader: BodyReader<StreamClient>;
  driver: BayeuxStreamDriver;
  open: boolean;
  /** Settles open(): the stream is up and its first /meta/connect answered. */
  waiting: Deferred | undefined;
  /** Status of the response being read. */
  status: number;
  /** Whether the response being read has sent anything (else a dead keep-alive is retried). */
  answered: boolean;
  /** eventsource: the next `/meta/connect`, and the stream's reopening after `retry`. */
  connectTimer: NodeJS.Timeout | undefined;
  reopenTimer: NodeJS.Timeout | undefined;
}

function lose(c: StreamClient, why: string): void {
  const d = c.driver;
  if (c.waiting) {
    const w = c.waiting;
    c.waiting = undefined;
    w.reject(new Error(why));
    return;
  }
  if (d.closing || !c.open) return;
  c.open = false;
  clearTimeout(c.connectTimer);
  clearTimeout(c.reopenTimer);
  c.stream.close();
  d.options.onSessionLost?.(c.index);
}

function settle(c: StreamClient): void {
  const w = c.waiting;
  c.waiting = undefined;
  w?.resolve();
}

function onFrame(c: StreamClient, text: string): void {
  const messages = parseFrame(text);
  if (messages === undefined) {
    lose(c, 'a stream frame that is not JSON');
    return;
  }
  const connect = deliverMessages(c.driver.options, c.index, messages);
  if (connect === undefined) return;
  if (!connect.successful) {
    lose(c, `stream refused: ${String(connect.error ?? 'no reason')}`);
    return;
  }
  settle(c);
}

const HANDLER: StreamHandler<StreamClient> = {
  onHead(c, status) {
    c.status = status;
    c.answered = true;
    c.reader.reset();
    // An EventSource's first event may come much later; its open is the 200.
    if (status === 200 && c.driver.kind === 'eventsource' && c.waiting) sendConnect(c);
  },
  onBody(c, text) {
    if (c.status === 200) c.reader.push(c, text, onFrame);
  },
  onEnd(c) {
    if (c.driver.closing || !c.open) return;
    if (c.status !== 200) {
      lose(c, `stream answered HTTP ${c.status}`);
      return;
    }
    if (c.driver.kind === 'streaming') openStream(c);
    else c.reopenTimer = setTimeout(openStream, (c.reader as SseReader<StreamClient>).retry, c);
  },
  onClose(c, error) {
    if (c.driver.closing || !c.open) return;
    // A kept-alive connection the server closed as the next stream went out: once more.
    if (!c.answered) {
      c.answered = true;
      c.stream.send(c.driver.streamRequest(c));
      return;
    }
    lose(c, `stream cut: ${error?.message ?? 'closed'}`);
  },
};

function openStream(c: StreamClient): void {
  if (c.driver.closing || !c.open) return;
  c.answered = false;
  c.stream.send(c.driver.streamRequest(c));
}

/** eventsource: the `/meta/connect` POST, on the interval the server advises. */
function sendConnect(c: StreamClient): void {
  if (c.driver.closing || !c.open) return;
  const body = `[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"eventsource"}]`;
  c.driver.post(c.index, body, c.cookie, onConnectReply, c);
}

function onConnectReply(c: StreamClient, error: Error | undefined, res: HttpResponse | undefined): void {
  if (c.driver.closing || !c.open) return;
  const messages = error || res?.status !== 200 ? undefined : parseFrame(res.body);
  const connect = messages && deliverMessages(c.driver.options, c.index, messages);
  if (!connect?.successful) {
    lose(c, `connect refused: ${String(connect?.error ?? error?.message)}`);
    return;
  }
  settle(c);
  const interval = (connect.advice as { interval?: unknown } | undefined)?.interval;
  const wait = Math.max(MIN_CONNECT_INTERVAL, typeof interval === 'number' ? interval : 0);
  c.connectTimer = setTimeout(sendConnect, wait, c);
}

function onPublishReply(driver: BayeuxStreamDriver, error: Error | undefined, res?: HttpResponse): void {
  // A server may answer a publish with deliveries queued for the publisher.
  const messages = !error && res?.status === 200 ? parseFrame(res.body) : undefined;
  if (messages) deliverMessages(driver.options, -1, messages);
}

export class BayeuxStreamDriver implements Driver {
  readonly options: DriverOptions;
  closing = false;
  private readonly url: URL;
  private readonly endpoint: ReturnType<typeof streamEndpoint>;
  private readonly pool: HttpConnection[];
  private readonly clients: (StreamClient | undefined)[] = [];
  private readonly handshake: string;

  constructor(
    options: DriverOptions,
    readonly kind: StreamKind,
  ) {
    this.options = options;
    this.url = new URL(toHttpUrl(options.url));
    this.endpoint = streamEndpoint(this.url, kind, options.headers);
    this.handshake = `[{"channel":"${META_HANDSHAKE}","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["${kind}","long-polling"],"id":"1"${handshakeExt(options)}}]`;
    this.pool = Array.from(
      { length: POOL_SIZE },
      (_, i) => new HttpConnection(this.url, this.addressFor(i), options.headers),
    );
  }

  private addressFor(index: number): string | undefined {
    const addrs = this.options.localAddresses;
    return addrs.length > 0 ? addrs[index % addrs.length] : undefined;
  }

  /** The request that opens client `c`'s stream. */
  streamRequest(c: StreamClient): string {
    return this.endpoint.request(c.clientId, c.cookie);
  }

  post<C>(index: number, body: string, cookie: string | undefined, handler: PostHandler<C>, ctx: C): void {
    this.pool[index % POOL_SIZE]!.request(body, cookie, handler, ctx);
  }

  private request(index: number, body: string, cookie: string | undefined): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      this.post(index, body, cookie, (_: null, e, res) => (e ? reject(e) : resolve(res!)), null);
    });
  }

  async open(index: number): Promise<void> {
    let res = await this.request(index, this.handshake, undefined);
    let [reply] = (res.status === 200 ? parseFrame(res.body) : undefined) ?? [];
    // A node admitting no session now says when to come back: ask again then.
    for (let wait = handshakeRetry(reply); wait !== null; wait = handshakeRetry(reply)) {
      await new Promise((r) => setTimeout(r, wait as number));
      res = await this.request(index, this.handshake, undefined);
      [reply] = (res.status === 200 ? parseFrame(res.body) : undefined) ?? [];
    }
    if (!reply?.successful || typeof reply.clientId !== 'string') {
      throw new Error(`handshake failed: ${reply?.error ?? `HTTP ${res.status}`}`);
    }
    const c: StreamClient = {
      index,
      clientId: reply.clientId,
      cookie: res.cookie,
      stream: undefined as unknown as StreamConnection<StreamClient>,
      reader: this.kind === 'streaming' ? new NdjsonReader() : new SseReader(),
      driver: this,
      open: true,
      waiting: deferred(),
      status: 0,
      answered: false,
      connectTimer: undefined,
      reopenTimer: undefined,
    };
    c.stream = new StreamConnection(this.url, this.addressFor(index), HANDLER, c);
    this.clients[index] = c;
    const opened = c.waiting!.promise;
    openStream(c);
    try {
      await opened;
    } catch (error) {
      c.open = false;
      c.stream.close();
      throw error;
    }
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const c = this.clients[index];
    if (!c) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"${META_SUBSCRIBE}","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const res = await this.request(index, `[${body.join(',')}]`, c.cookie);
    const replies = (res.status === 200 ? parseFrame(res.body) : undefined) ?? [];
    deliverMessages(this.options, index, replies);
    const failed = replies.find((m) => m.channel === META_SUBSCRIBE && !m.successful);
    if (failed || replies.length === 0) {
      throw new Error(`subscribe ${String(failed?.subscription)} failed: ${failed?.error ?? res.status}`);
    }
  }

  publish(index: number, channel: string, dataJson: string): void {
    const c = this.clients[index];
    if (!c?.open) return;
    const body = `[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`;
    this.post(index, body, c.cookie, onPublishReply, this);
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close(): Promise<void> {
    const open = this.clients.filter((c): c is StreamClient => c?.open === true);
    // Set first: the streams that the disconnects end are not lost sessions.
    this.closing = true;
    for (const c of open) {
      clearTimeout(c.connectTimer);
      clearTimeout(c.reopenTimer);
    }
    // Disconnect politely, in slices, so a server is not hit by thousands of requests at once.
    for (let i = 0; i < open.length; i += 200) {
      const slice = open.slice(i, i + 200);
      await Promise.all(
        slice.map((c) =>
          this.request(
            c.index,
            `[{"channel":"${META_DISCONNECT}","clientId":"${c.clientId}"}]`,
            c.cookie,
          ).catch(() => undefined),
        ),
      );
    }
    for (const c of this.clients) {
      if (!c) continue;
      c.open = false;
      c.stream.close();
    }
    for (const conn of this.pool) conn.close();
  }
}

type PostHandler<C> = (ctx: C, error: Error | undefined, res: HttpResponse | undefined) => void;

/** Bayou's `streaming` connection type, lean. */
export function bayeuxStreaming(options: DriverOptions): Driver {
  return new BayeuxStreamDriver(options, 'streaming');
}

/** The `eventsource` connection type (Faye's, and Bayou's Faye-compatible one), lean. */
export function bayeuxEventSource(options: DriverOptions): Driver {
  return new BayeuxStreamDriver(options, 'eventsource');
}
