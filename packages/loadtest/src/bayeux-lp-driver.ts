/**
 * Bayeux long-polling for many simulated clients. Each client has its own connection for
 * its held /meta/connect (re-sent as soon as the response comes back) and keeps the
 * browser cookie the server gave it, as a browser would. Handshakes, subscribes and
 * publishes are pipelined over a small shared pool of connections.
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
import { type Driver, type DriverOptions, deliverPayload, handshakeExt, toHttpUrl } from './driver.js';
import { HttpConnection, type HttpResponse } from './http-connection.js';

/** Shared connections for everything but the held polls. */
const POOL_SIZE = 16;

interface LpClient {
  index: number;
  clientId: string;
  cookie: string | undefined;
  poll: HttpConnection;
  open: boolean;
  driver: BayeuxLpDriver;
}

function parseReply(error: Error | undefined, res: HttpResponse | undefined): Message[] {
  if (error) throw error;
  if (res!.status !== 200) throw new Error(`HTTP ${res!.status}`);
  return JSON.parse(res!.body) as Message[];
}

/** Hands the deliveries of a response to the sink (or the record sink, for client `index`). */
function deliverAll(driver: BayeuxLpDriver, index: number, messages: Message[]): boolean {
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

function onConnectResponse(c: LpClient, error: Error | undefined, res: HttpResponse | undefined): void {
  if (c.driver.closing || !c.open) return;
  let ok = false;
  try {
    ok = deliverAll(c.driver, c.index, parseReply(error, res));
  } catch {
    ok = false;
  }
  if (ok) {
    sendConnect(c, false);
    return;
  }
  c.open = false;
  c.driver.options.onSessionLost?.(c.index);
}

function onPublishResponse(
  driver: BayeuxLpDriver,
  error: Error | undefined,
  res: HttpResponse | undefined,
): void {
  // A server may answer a publish with deliveries queued for the publisher.
  if (!error && res?.status === 200) deliverAll(driver, -1, JSON.parse(res.body) as Message[]);
}

function sendConnect(c: LpClient, first: boolean): void {
  // The first connect asks for an immediate answer, as CometD clients do; later ones are held.
  const advice = first ? ',"advice":{"timeout":0}' : '';
  const body = `[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"long-polling"${advice}}]`;
  c.poll.request(body, c.cookie, onConnectResponse, c);
}

export class BayeuxLpDriver implements Driver {
  readonly options: DriverOptions;
  closing = false;
  private readonly url: URL;
  private readonly pool: HttpConnection[];
  private readonly clients: (LpClient | undefined)[] = [];
  private readonly handshake: string;

  constructor(options: DriverOptions) {
    this.options = options;
    const ext = handshakeExt(options);
    this.handshake = `[{"channel":"${META_HANDSHAKE}","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["long-polling"],"id":"1"${ext}}]`;
    this.url = new URL(toHttpUrl(options.url));
    this.pool = Array.from(
      { length: POOL_SIZE },
      (_, i) => new HttpConnection(this.url, this.addressFor(i), options.headers),
    );
  }

  private addressFor(index: number): string | undefined {
    const addrs = this.options.localAddresses;
    return addrs.length > 0 ? addrs[index % addrs.length] : undefined;
  }

  private request(index: number, body: string, cookie: string | undefined): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      this.pool[index % POOL_SIZE]!.request(
        body,
        cookie,
        (_ctx: null, error, res) => (error ? reject(error) : resolve(res!)),
        null,
      );
    });
  }

  async open(index: number): Promise<void> {
    const res = await this.request(index, this.handshake, undefined);
    const [reply] = parseReply(undefined, res);
    if (!reply?.successful || typeof reply.clientId !== 'string') {
      throw new Error(`handshake failed: ${reply?.error ?? 'no reply'}`);
    }
    const poll = new HttpConnection(this.url, this.addressFor(index), this.options.headers);
    const c: LpClient = {
      index,
      clientId: reply.clientId,
      cookie: res.cookie,
      poll,
      open: true,
      driver: this,
    };
    this.clients[index] = c;
    sendConnect(c, true);
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const c = this.clients[index];
    if (!c) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"${META_SUBSCRIBE}","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const replies = parseReply(undefined, await this.request(index, `[${body.join(',')}]`, c.cookie));
    // A server may put deliveries (a record's snapshot, say) into any response.
    deliverAll(this, index, replies);
    const failed = replies.find((m) => m.channel === META_SUBSCRIBE && !m.successful);
    if (failed) throw new Error(`subscribe ${String(failed.subscription)} failed: ${failed.error ?? ''}`);
  }

  publish(index: number, channel: string, dataJson: string): void {
    const c = this.clients[index];
    if (!c?.open) return;
    const body = `[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`;
    this.pool[index % POOL_SIZE]!.request(body, c.cookie, onPublishResponse, this);
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close(): Promise<void> {
    const open = this.clients.filter((c): c is LpClient => c?.open === true);
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
      c.poll.close();
    }
    for (const conn of this.pool) conn.close();
  }
}

export function bayeuxLongPolling(options: DriverOptions): Driver {
  return new BayeuxLpDriver(options);
}
