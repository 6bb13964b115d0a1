/**
 * One raw HTTP/1.1 connection that holds a streamed response (Bayou's `streaming` stream or
 * an EventSource): it writes a pre-formatted request, reads the head, then hands the body on
 * as it arrives — undone of chunked framing, decoded as UTF-8 — until the response ends.
 * The connection is kept for the next stream when the response ended cleanly and the server
 * did not ask to close it. As with http-connection.ts, node:http's machinery would cost the
 * generator more per chunk than the server spends writing it.
 */
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** What a stream's owner hears; `ctx` is whatever it passed, so no closure per client. */
export interface StreamHandler<C> {
  /** The response head: its status and its head lowercased (header lookups). */
  onHead(ctx: C, status: number, lowerHead: string): void;
  /** A piece of the body, as text. */
  onBody(ctx: C, text: string): void;
  /** The response ended; `reusable` when the connection can carry the next request. */
  onEnd(ctx: C, reusable: boolean): void;
  /** The connection went away before the response ended (or while idle). */
  onClose(ctx: C, error: Error | undefined): void;
}

type Framing = 'chunked' | 'length' | 'close';
type State = 'idle' | 'head' | 'size' | 'data' | 'data-crlf' | 'trailer' | 'raw';

const CONN = Symbol('stream-connection');
type ConnSocket = net.Socket & { [CONN]?: StreamConnection<unknown> };
const HEADER_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

function onData(this: ConnSocket, chunk: Buffer): void {
  const c = this[CONN];
  if (!c) return;
  c.buffer = c.buffer.length === 0 ? chunk : Buffer.concat([c.buffer, chunk]);
  c.parse();
}

function onGone(this: ConnSocket, error?: Error): void {
  this[CONN]?.gone(this, error instanceof Error ? error : undefined);
}

export class StreamConnection<C> {
  buffer: Buffer = EMPTY;
  private socket: ConnSocket | undefined;
  private state: State = 'idle';
  private framing: Framing = 'close';
  private remaining = 0;
  private keepAlive = true;
  private decoder = new StringDecoder('utf8');

  constructor(
    private readonly url: URL,
    private readonly localAddress: string | undefined,
    private readonly handler: StreamHandler<C>,
    private readonly ctx: C,
  ) {}

  /** Whether a response is being read (head or body). */
  get busy(): boolean {
    return this.state !== 'idle';
  }

  /** Sends `request` (a whole HTTP/1.1 request, head and body) and reads its response. */
  send(request: string): void {
    if (!this.socket) this.connect();
    this.state = 'head';
    this.decoder = new StringDecoder('utf8');
    this.socket!.write(request);
  }

  /** Destroys the connection; no handler is called for it. */
  close(): void {
    const s = this.socket;
    this.socket = undefined;
    this.state = 'idle';
    if (s) {
      s[CONN] = undefined;
      s.destroy();
    }
  }

  private connect(): void {
    const s: ConnSocket = net.connect({
      host: this.url.hostname,
      port: Number(this.url.port || 80),
      localAddress: this.localAddress,
    });
    s.setNoDelay(true);
    s[CONN] = this as StreamConnection<unknown>;
    s.on('data', onData);
    s.on('close', onGone);
    s.on('error', onGone);
    this.socket = s;
    this.buffer = EMPTY;
  }

  /** The socket closed or failed: a body read to the close ends there, anything else is lost. */
  gone(socket: ConnSocket, error: Error | undefined): void {
    if (socket !== this.socket) return;
    socket[CONN] = undefined;
    this.socket = undefined;
    this.buffer = EMPTY;
    const state = this.state;
    this.state = 'idle';
    if (state === 'raw' && error === undefined) {
      const rest = this.decoder.end();
      if (rest) this.handler.onBody(this.ctx, rest);
      this.handler.onEnd(this.ctx, false);
    } else this.handler.onClose(this.ctx, error ?? new Error('connection closed'));
  }

  /** Consumes what the buffer holds, as far as the state machine can go. */
  parse(): void {
    while (this.buffer.length > 0 && this.socket) {
      if (!this.step()) return;
    }
  }

  /** One step of the response state machine; false when it needs more bytes. */
  private step(): boolean {
    switch (this.state) {
      case 'head':
        return this.readHead();
      case 'size':
        return this.readSize();
      case 'data':
      case 'raw':
        return this.readData();
      case 'data-crlf':
        if (this.buffer.length < 2) return false;
        this.buffer = this.buffer.subarray(2);
        this.state = 'size';
        return true;
      case 'trailer':
        return this.readTrailer();
      default:
        // Bytes with no request out: nothing this client asked for.
        this.buffer = EMPTY;
        return false;
    }
  }

  private readHead(): boolean {
    const end = this.buffer.indexOf(HEADER_END);
    if (end < 0) return false;
    const head = this.buffer.toString('latin1', 0, end);
    this.buffer = this.buffer.subarray(end + 4);
    const lower = head.toLowerCase();
    const status = Number(head.slice(9, 12));
    this.keepAlive = !/\r\nconnection:\s*close/.test(lower);
    if (lower.includes('\r\ntransfer-encoding: chunked')) this.framing = 'chunked';
    else if (lower.includes('\r\ncontent-length:')) this.framing = 'length';
    else this.framing = 'close';
    this.handler.onHead(this.ctx, status, lower);
    if (this.framing === 'chunked') this.state = 'size';
    else if (this.framing === 'length') {
      const at = lower.indexOf('\r\ncontent-length:') + 17;
      this.remaining = Number.parseInt(lower.slice(at, lower.indexOf('\r\n', at) >>> 0), 10) || 0;
      this.state = 'data';
      if (this.remaining === 0) this.finish();
    } else this.state = 'raw';
    return true;
  }

  private readSize(): boolean {
    const eol = this.buffer.indexOf('\r\n');
    if (eol < 0) return false;
    const size = Number.parseInt(this.buffer.toString('latin1', 0, eol), 16);
    this.buffer = this.buffer.subarray(eol + 2);
    if (!Number.isFinite(size)) {
      this.socket?.destroy(new Error('bad chunk size'));
      return false;
    }
    if (size === 0) this.state = 'trailer';
    else {
      this.remaining = size;
      this.state = 'data';
    }
    return true;
  }

  private readData(): boolean {
    const raw = this.state === 'raw';
    const n = raw ? this.buffer.length : Math.min(this.remaining, this.buffer.length);
    const text = this.decoder.write(n === this.buffer.length ? this.buffer : this.buffer.subarray(0, n));
    this.buffer = n === this.buffer.length ? EMPTY : this.buffer.subarray(n);
    if (text) this.handler.onBody(this.ctx, text);
    if (raw) return true;
    this.remaining -= n;
    if (this.remaining > 0) return true;
    if (this.framing === 'chunked') this.state = 'data-crlf';
    else this.finish();
    return true;
  }

  private readTrailer(): boolean {
    const eol = this.buffer.indexOf('\r\n');
    if (eol < 0) return false;
    this.buffer = this.buffer.subarray(eol + 2);
    if (eol === 0) this.finish();
    return true;
  }

  private finish(): void {
    this.state = 'idle';
    const reusable = this.keepAlive;
    if (!reusable) this.close();
    this.handler.onEnd(this.ctx, reusable);
  }
}
