/**
 * A minimal Bayeux client for the server's own tests, over either transport: it speaks
 * the wire protocol directly so tests can also send what a real client never would.
 */
import WebSocket from 'ws';

export type Transport = 'websocket' | 'long-polling';
export type Msg = Record<string, unknown> & { channel?: string; id?: string; successful?: boolean };

let nextId = 0;
let nextMarker = 0;

export class TestClient {
  clientId = '';
  readonly received: Msg[] = [];
  /** The messages of each WebSocket frame received, in order. */
  readonly frames: Msg[][] = [];
  private readonly pending = new Map<string, (m: Msg) => void>();
  private readonly waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  private ws: WebSocket | null = null;
  private polling = false;
  closedWith: number | null = null;
  private socketClosed: Promise<number> | null = null;
  /** The `BAYEUX_BROWSER` cookie the server gave, sent back as a browser would (unless `headers` set one). */
  cookie: string | null = null;
  /** Keep and send back cookies (long-polling). */
  keepCookies = true;
  /** The `Set-Cookie` header of the last long-polling reply, attributes and all (null: none). */
  lastSetCookie: string | null = null;

  constructor(
    readonly base: string,
    readonly transport: Transport,
    readonly headers: Record<string, string> = {},
    readonly path = '/bayeux',
  ) {}

  get endpoint(): string {
    return `${this.base}${this.path}`;
  }

  /** Handshake and start the connect loop. */
  async connect(ext?: Record<string, unknown>): Promise<Msg> {
    const reply = await this.handshake(ext);
    if (reply.successful) this.startConnectLoop();
    return reply;
  }

  /** Handshake only (the test sends its own connects); keeps the clientId of a success. */
  async handshake(ext?: Record<string, unknown>): Promise<Msg> {
    if (this.transport === 'websocket' && this.ws === null) await this.open();
    const reply = await this.request({
      channel: '/meta/handshake',
      version: '1.0',
      supportedConnectionTypes: [this.transport],
      ...(ext ? { ext } : {}),
    });
    if (reply.successful) this.clientId = reply.clientId as string;
    return reply;
  }

  /** Opens the WebSocket (a session's next socket when `clientId` is set by the test). */
  open(): Promise<void> {
    const ws = new WebSocket(this.endpoint.replace(/^http/, 'ws'), { headers: this.headers });
    this.ws = ws;
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Msg[];
      this.frames.push(frame);
      for (const m of frame) this.dispatch(m);
    });
    this.socketClosed = new Promise((resolve) =>
      ws.on('close', (code) => {
        this.closedWith = code;
        resolve(code);
      }),
    );
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
  }

  /** Sends raw text on the socket or as a POST body; resolves to the HTTP status (LP). */
  async sendRaw(text: string, contentType = 'application/json'): Promise<{ status: number; body: string }> {
    if (this.ws !== null) {
      this.ws.send(text);
      return { status: 0, body: '' };
    }
    const jar: Record<string, string> =
      this.keepCookies && this.cookie !== null ? { cookie: this.cookie } : {};
    const r = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'content-type': contentType, ...jar, ...this.headers },
      body: text,
    });
    const set = r.headers.get('set-cookie');
    this.lastSetCookie = set;
    if (set !== null) this.cookie = set.split(';')[0] as string;
    const body = await r.text();
    if (r.ok) for (const m of JSON.parse(body) as Msg[]) this.dispatch(m);
    return { status: r.status, body };
  }

  /** Sends messages in one frame/request; resolves with the reply to each. */
  async send(messages: Msg[]): Promise<Msg[]> {
    const withIds = messages.map((m) => ({ id: String(++nextId), ...m }));
    const replies = withIds.map(
      (m) => new Promise<Msg>((resolve) => this.pending.set(m.id as string, resolve)),
    );
    await this.sendRaw(JSON.stringify(withIds));
    return Promise.all(replies);
  }

  async request(message: Msg): Promise<Msg> {
    const [reply] = await this.send([message]);
    return reply as Msg;
  }

  subscribe(subscription: string | string[]): Promise<Msg> {
    return this.request({ channel: '/meta/subscribe', clientId: this.clientId, subscription });
  }

  unsubscribe(subscription: string | string[]): Promise<Msg> {
    return this.request({ channel: '/meta/unsubscribe', clientId: this.clientId, subscription });
  }

  publish(channel: string, data: unknown): Promise<Msg> {
    return this.request({ channel, clientId: this.clientId, data });
  }

  /** Resolves with the first message (past or future) matching `pred`. */
  waitFor(pred: (m: Msg) => boolean): Promise<Msg> {
    const seen = this.received.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /**
   * Resolves once everything queued for this session before now has arrived: a marker is
   * published (by `publish`, e.g. the server's `bayou.publish`) on a channel of its own and
   * awaited. A session's messages leave in order, so "nothing else arrived" can then be
   * asserted without sleeping.
   */
  async drained(publish: (channel: string, data: unknown) => unknown): Promise<void> {
    const channel = `/drained/${++nextMarker}`;
    await this.subscribe(channel);
    await publish(channel, 'marker');
    await this.waitFor((m) => m.channel === channel && m.successful === undefined);
  }

  /** Resolves with the WebSocket's close code once the server (or `close`) closed it. */
  closed(): Promise<number> {
    if (this.socketClosed === null) throw new Error('closed() is for the WebSocket transport');
    return this.socketClosed;
  }

  /** Deliveries (not replies) on channels matching `prefix`. */
  deliveries(prefix = '/'): Msg[] {
    return this.received.filter((m) => m.successful === undefined && String(m.channel).startsWith(prefix));
  }

  private dispatch(m: Msg): void {
    const resolve = m.id !== undefined && m.successful !== undefined ? this.pending.get(m.id) : undefined;
    if (resolve) {
      this.pending.delete(m.id as string);
      resolve(m);
    }
    this.received.push(m);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i];
      if (w?.pred(m)) {
        this.waiters.splice(i, 1);
        w.resolve(m);
      }
    }
  }

  private startConnectLoop(): void {
    this.polling = true;
    const loop = async (): Promise<void> => {
      while (this.polling) {
        const reply = await this.request({
          channel: '/meta/connect',
          clientId: this.clientId,
          connectionType: this.transport,
        }).catch(() => null);
        if (reply === null || !reply.successful) break;
      }
    };
    void loop();
  }

  async close(): Promise<void> {
    this.polling = false;
    this.ws?.terminate();
    this.ws = null;
    // Reject nothing: pending replies of a closed client are simply dropped.
    this.pending.clear();
  }
}

/** The node id of the server at `base`: what precedes the dot in the clientId of a handshake there. */
export async function nodeIdAt(base: string): Promise<string> {
  const c = new TestClient(base, 'long-polling');
  const reply = await c.handshake();
  if (!reply.successful) throw new Error(`handshake at ${base} failed: ${JSON.stringify(reply)}`);
  return c.clientId.split('.')[0] as string;
}

// The repository's one polling wait; prefer `waitFor` (an arriving message) or `drained`.
export { eventually } from '../../../scripts/eventually.mjs';
