/**
 * Bayeux over a held stream as a browser tab speaks it (browser-tab.ts: node:http, a cookie
 * jar, Chrome's headers, two keep-alive connections): Bayou's `streaming` as `@bayou/client`
 * opens it with `fetch` (a POST whose body is read as it arrives) and Faye's `eventsource`
 * as the browser's EventSource opens it (a GET, reopened after the server's `retry` when it
 * ends). What the server sees is what a browser sends; the lean driver
 * (bayeux-stream-driver.ts) is the same conversation on raw sockets.
 */
import type { IncomingMessage } from 'node:http';
import { META_CONNECT, META_DISCONNECT, META_HANDSHAKE, META_SUBSCRIBE, type Message } from '@bayou/protocol';
import { BrowserTab, decodeStream, eventSourceHeaders, fetchPostHeaders } from './browser-tab.js';
import {
  type Deferred,
  type Driver,
  type DriverOptions,
  deferred,
  handshakeExt,
  handshakeRetry,
  toHttpUrl,
} from './driver.js';
import { type BodyReader, NdjsonReader, SseReader } from './stream-body.js';
import {
  basePath,
  deliverMessages,
  parseFrame,
  STREAM_PATH,
  type StreamKind,
  streamConnect,
} from './stream-frames.js';

/** The eventsource connect loop never runs faster than this, whatever the advice says. */
const MIN_CONNECT_INTERVAL = 1000;

interface TabClient {
  index: number;
  clientId: string;
  tab: BrowserTab;
  reader: BodyReader<TabClient>;
  open: boolean;
  waiting: Deferred | undefined;
  connectTimer: NodeJS.Timeout | undefined;
  reopenTimer: NodeJS.Timeout | undefined;
}

const asMessages = (reply: unknown): Message[] => (Array.isArray(reply) ? (reply as Message[]) : []);

export class BrowserStreamDriver implements Driver {
  closing = false;
  private readonly url: URL;
  private readonly clients: (TabClient | undefined)[] = [];
  private readonly handshake: string;

  constructor(
    readonly options: DriverOptions,
    readonly kind: StreamKind,
  ) {
    if (options.records) throw new Error('the browser-like stream driver does not decode records');
    this.url = new URL(toHttpUrl(options.url));
    this.handshake = `[{"channel":"${META_HANDSHAKE}","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["${kind}","long-polling"],"id":"1"${handshakeExt(options)}}]`;
  }

  private addressFor(index: number): string | undefined {
    const addrs = this.options.localAddresses;
    return addrs.length > 0 ? addrs[index % addrs.length] : undefined;
  }

  async open(index: number): Promise<void> {
    const tab = new BrowserTab(this.url, this.addressFor(index), this.options.headers ?? {});
    let reply: Message | undefined;
    try {
      [reply] = asMessages(await tab.post(this.handshake));
      // A node admitting no session now says when to come back: ask again then.
      for (let wait = handshakeRetry(reply); wait !== null; wait = handshakeRetry(reply)) {
        await new Promise((r) => setTimeout(r, wait as number));
        [reply] = asMessages(await tab.post(this.handshake));
      }
    } catch (error) {
      tab.close();
      throw error;
    }
    if (!reply?.successful || typeof reply.clientId !== 'string') {
      tab.close();
      throw new Error(`handshake failed: ${reply?.error ?? 'no reply'}`);
    }
    const c: TabClient = {
      index,
      clientId: reply.clientId,
      tab,
      reader: this.kind === 'streaming' ? new NdjsonReader() : new SseReader(),
      open: true,
      waiting: deferred(),
      connectTimer: undefined,
      reopenTimer: undefined,
    };
    this.clients[index] = c;
    const opened = c.waiting!.promise;
    this.openStream(c);
    try {
      await opened;
    } catch (error) {
      c.open = false;
      tab.close();
      throw error;
    }
  }

  private openStream(c: TabClient): void {
    if (this.closing || !c.open) return;
    const base = basePath(this.url);
    const search = this.url.search;
    const req =
      this.kind === 'streaming'
        ? c.tab.request('POST', `${base}${STREAM_PATH}${search}`, fetchPostHeaders(this.url))
        : c.tab.request('GET', `${base}/${c.clientId}${search}`, eventSourceHeaders(this.url));
    req.on('response', (res) => this.onStream(c, res));
    req.on('error', (error) => this.lose(c, `stream failed: ${error.message}`));
    req.end(this.kind === 'streaming' ? streamConnect(c.clientId) : undefined);
  }

  private onStream(c: TabClient, res: IncomingMessage): void {
    c.tab.jar.store(res.headers['set-cookie']);
    if (res.statusCode !== 200) {
      res.resume();
      this.lose(c, `stream answered HTTP ${res.statusCode}`);
      return;
    }
    // An EventSource's first event may come much later; its open is the 200.
    if (this.kind === 'eventsource' && c.waiting) this.sendConnect(c);
    c.reader.reset();
    const body = decodeStream(res.headers['content-encoding'], res);
    body.setEncoding('utf8');
    body.on('data', (text: string) => c.reader.push(c, text, (cc, frame) => this.onFrame(cc, frame)));
    body.on('error', (error) => this.lose(c, `stream cut: ${error.message}`));
    body.on('end', () => {
      if (this.closing || !c.open) return;
      // The server ended it (Bayou's recycle): fetch opens the next at once, EventSource after `retry`.
      if (this.kind === 'streaming') this.openStream(c);
      else c.reopenTimer = setTimeout(() => this.openStream(c), (c.reader as SseReader<TabClient>).retry);
    });
  }

  private onFrame(c: TabClient, text: string): void {
    const messages = parseFrame(text);
    if (messages === undefined) {
      this.lose(c, 'a stream frame that is not JSON');
      return;
    }
    const connect = deliverMessages(this.options, c.index, messages);
    if (connect === undefined) return;
    if (!connect.successful) {
      this.lose(c, `stream refused: ${String(connect.error ?? 'no reason')}`);
      return;
    }
    this.settle(c);
  }

  /** eventsource: the `/meta/connect` POST, on the interval the server advises. */
  private sendConnect(c: TabClient): void {
    if (this.closing || !c.open) return;
    c.tab
      .post(`[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"eventsource"}]`)
      .then(
        (reply) => {
          if (this.closing || !c.open) return;
          const connect = deliverMessages(this.options, c.index, asMessages(reply));
          if (!connect?.successful) {
            this.lose(c, `connect refused: ${String(connect?.error)}`);
            return;
          }
          this.settle(c);
          const interval = (connect.advice as { interval?: unknown } | undefined)?.interval;
          const wait = Math.max(MIN_CONNECT_INTERVAL, typeof interval === 'number' ? interval : 0);
          c.connectTimer = setTimeout(() => this.sendConnect(c), wait);
        },
        (error: Error) => this.lose(c, `connect failed: ${error.message}`),
      );
  }

  private settle(c: TabClient): void {
    const w = c.waiting;
    c.waiting = undefined;
    w?.resolve();
  }

  private lose(c: TabClient, why: string): void {
    if (c.waiting) {
      const w = c.waiting;
      c.waiting = undefined;
      w.reject(new Error(why));
      return;
    }
    if (this.closing || !c.open) return;
    c.open = false;
    clearTimeout(c.connectTimer);
    clearTimeout(c.reopenTimer);
    c.tab.close();
    this.options.onSessionLost?.(c.index);
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const c = this.clients[index];
    if (!c?.open) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"${META_SUBSCRIBE}","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const replies = asMessages(await c.tab.post(`[${body.join(',')}]`));
    deliverMessages(this.options, index, replies);
    const failed = replies.find((m) => m.channel === META_SUBSCRIBE && !m.successful);
    if (failed || replies.length === 0) {
      throw new Error(`subscribe ${String(failed?.subscription)} failed: ${failed?.error ?? 'no reply'}`);
    }
  }

  publish(index: number, channel: string, dataJson: string): void {
    const c = this.clients[index];
    if (!c?.open) return;
    // A server may answer a publish with deliveries queued for the publisher.
    c.tab.post(`[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`).then(
      (reply) => deliverMessages(this.options, -1, asMessages(reply)),
      () => {},
    );
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close(): Promise<void> {
    const open = this.clients.filter((c): c is TabClient => c?.open === true);
    // Set first: the streams that the disconnects end are not lost sessions.
    this.closing = true;
    for (let i = 0; i < open.length; i += 200) {
      await Promise.all(
        open.slice(i, i + 200).map((c) => {
          clearTimeout(c.connectTimer);
          clearTimeout(c.reopenTimer);
          return c.tab.post(`[{"channel":"${META_DISCONNECT}","clientId":"${c.clientId}"}]`).catch(() => {});
        }),
      );
    }
    for (const c of this.clients) {
      if (!c) continue;
      c.open = false;
      c.tab.close();
    }
  }
}

/** Bayou's `streaming` connection type as `@bayou/client` in Chrome opens it. */
export function browserStreaming(options: DriverOptions): Driver {
  return new BrowserStreamDriver(options, 'streaming');
}

/** The `eventsource` connection type as Faye's browser client in Chrome opens it. */
export function browserEventSource(options: DriverOptions): Driver {
  return new BrowserStreamDriver(options, 'eventsource');
}
