/**
 * Bayeux long-polling for many simulated clients: handshake, subscribe, a /meta/connect
 * re-sent as soon as its response comes back (the first asking for an immediate answer),
 * publish, disconnect. Each client keeps the browser cookie the server gave it, as a browser
 * would. How requests travel is lp-http.ts's: by default (`bayeuxLongPolling`) each client's
 * held poll has a connection of its own and everything else is pipelined over a small shared
 * pool; the bench's browser-like generators run this same conversation over browser tabs.
 */
import {
  EXT_RECORD_KIND,
  isMetaChannel,
  META_CONNECT,
  META_DISCONNECT,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  type Message,
} from '@bayou/protocol';
import {
  type Driver,
  type DriverFactory,
  type DriverOptions,
  deliverPayload,
  handshakeExt,
  handshakeRetry,
  toHttpUrl,
} from './driver.js';
import type { HttpResponse } from './http-connection.js';
import { type LpHttp, type LpHttpFactory, leanHttp } from './lp-http.js';

interface LpClient<R> {
  index: number;
  clientId: string;
  /** The handshake's cookie, sent back on every request (undefined when the transport keeps cookies). */
  cookie: string | undefined;
  open: boolean;
  driver: BayeuxLpDriver<R>;
}

/** Hands the deliveries of a response to the sink (or the record sink, for client `index`). */
function deliverAll<R>(driver: BayeuxLpDriver<R>, index: number, messages: Message[]): boolean {
  let connectOk = true;
  let carried = false;
  const records = driver.options.records;
  for (const m of messages) {
    if (m.channel === META_CONNECT) connectOk = m.successful === true;
    else if (m.data !== undefined && !isMetaChannel(m.channel)) {
      if (records) records.onRecord(index, m.channel, m.data, m.ext?.[EXT_RECORD_KIND]);
      else deliverPayload(driver.options.sink, m.data);
      carried = true;
    }
  }
  if (carried) driver.options.onFrame?.();
  return connectOk;
}

function onConnectResponse<R>(c: LpClient<R>, error: Error | undefined, res: R | undefined): void {
  const d = c.driver;
  if (d.closing || !c.open) return;
  let ok = false;
  try {
    ok = error === undefined && res !== undefined && deliverAll(d, c.index, d.http.replies(res));
  } catch {
    ok = false;
  }
  if (ok) {
    sendConnect(c, false);
    return;
  }
  c.open = false;
  d.options.onSessionLost?.(c.index);
}

function onPublishResponse<R>(driver: BayeuxLpDriver<R>, error: Error | undefined, res: R | undefined): void {
  if (error !== undefined || res === undefined) return;
  let replies: Message[];
  try {
    replies = driver.http.replies(res);
  } catch {
    return;
  }
  // A server may answer a publish with deliveries queued for the publisher.
  deliverAll(driver, -1, replies);
}

function sendConnect<R>(c: LpClient<R>, first: boolean): void {
  // The first connect asks for an immediate answer, as CometD clients do; later ones are held.
  const advice = first ? ',"advice":{"timeout":0}' : '';
  const body = `[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"long-polling"${advice}}]`;
  c.driver.http.poll(c.index, body, c.cookie, onConnectResponse, c);
}

/** Settles the promise of a setup or teardown request (`ctx`). */
function settle<R>(
  ctx: { resolve: (res: R) => void; reject: (error: Error) => void },
  error: Error | undefined,
  res: R | undefined,
): void {
  if (error !== undefined || res === undefined) ctx.reject(error ?? new Error('no response'));
  else ctx.resolve(res);
}

/** The Bayeux long-polling conversation of many simulated clients, over a transport `R` (lp-http.ts). */
export class BayeuxLpDriver<R> implements Driver {
  readonly options: DriverOptions;
  readonly http: LpHttp<R>;
  closing = false;
  private readonly clients: (LpClient<R> | undefined)[] = [];
  private readonly handshake: string;

  constructor(options: DriverOptions, http: LpHttpFactory<R>) {
    this.options = options;
    const ext = handshakeExt(options);
    this.handshake = `[{"channel":"${META_HANDSHAKE}","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["long-polling"],"id":"1"${ext}}]`;
    this.http = http(new URL(toHttpUrl(options.url)), options);
  }

  private request(index: number, body: string, cookie: string | undefined): Promise<R> {
    return new Promise((resolve, reject) => this.http.send(index, body, cookie, settle, { resolve, reject }));
  }

  async open(index: number): Promise<void> {
    let clientId: string;
    let cookie: string | undefined;
    try {
      let res = await this.request(index, this.handshake, undefined);
      let [reply] = this.http.replies(res);
      // A node admitting no session now says when to come back: ask again then.
      for (let wait = handshakeRetry(reply); wait !== null; wait = handshakeRetry(reply)) {
        await new Promise((r) => setTimeout(r, wait as number));
        res = await this.request(index, this.handshake, undefined);
        [reply] = this.http.replies(res);
      }
      if (!reply?.successful || typeof reply.clientId !== 'string') {
        throw new Error(`handshake failed: ${reply?.error ?? 'no reply'}`);
      }
      clientId = reply.clientId;
      cookie = this.http.cookie(res);
    } catch (error) {
      this.http.drop(index);
      throw error;
    }
    const c: LpClient<R> = { index, clientId, cookie, open: true, driver: this };
    this.clients[index] = c;
    sendConnect(c, true);
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const c = this.clients[index];
    if (!c) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"${META_SUBSCRIBE}","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const replies = this.http.replies(await this.request(index, `[${body.join(',')}]`, c.cookie));
    // A server may put deliveries (a record's snapshot, say) into any response.
    deliverAll(this, index, replies);
    const failed = replies.find((m) => m.channel === META_SUBSCRIBE && !m.successful);
    if (failed) throw new Error(`subscribe ${String(failed.subscription)} failed: ${failed.error ?? ''}`);
  }

  publish(index: number, channel: string, dataJson: string): void {
    const c = this.clients[index];
    if (!c?.open) return;
    const body = `[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`;
    this.http.send(index, body, c.cookie, onPublishResponse, this);
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close(): Promise<void> {
    const open = this.clients.filter((c): c is LpClient<R> => c?.open === true);
    // Set first: the held polls that the disconnects end are not lost sessions.
    this.closing = true;
    // Disconnect politely, in slices, so a server is not hit by thousands of requests at once.
    for (let i = 0; i < open.length; i += 200) {
      await Promise.all(
        open
          .slice(i, i + 200)
          .map((c) =>
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
      this.http.drop(c.index);
    }
    this.http.close();
  }
}

/** A driver factory for the long-polling conversation over another transport (the bench's browser-like generators). */
export function longPollingOver<R>(http: LpHttpFactory<R>): DriverFactory {
  return (options) => new BayeuxLpDriver(options, http);
}

export function bayeuxLongPolling(options: DriverOptions): Driver {
  return new BayeuxLpDriver<HttpResponse>(options, leanHttp);
}
