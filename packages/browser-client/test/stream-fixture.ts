/**
 * A small real HTTP server (node:http on loopback) that speaks the `streaming` wire format
 * of docs/streaming.md, for the client's streaming unit tests: handshake with numbered
 * frames, `POST <path>/stream` answering a padding line, the connect reply and then one
 * line per delivery frame (with its `/meta/ack` marker), recycling after a number of frames,
 * and long-polling for the fallback. It can buffer a stream's body until its end (what a
 * buffering proxy does) and cut a stream mid-flight. It is no Bayeux server: one session
 * at a time, exact channels only.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Message } from '../src/index.js';

interface Frame {
  readonly n: number;
  readonly messages: Message[];
}

export class StreamFixture {
  /** Streams opened, with the `/meta/connect` that opened each. */
  readonly opened: Message[] = [];
  /** Every message received on ordinary POSTs. */
  readonly posted: Message[] = [];
  /** Hold each stream's body until it ends (a buffering proxy). */
  buffer = false;
  /** Recycle a stream after this many delivery frames (0: never). */
  recycleAfter = 0;
  /** Cut the stream after writing this many more delivery frames (0: no cut). */
  cutAfter = 0;
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private clientId = '';
  private subscriptions = new Set<string>();
  private queue: Message[] = [];
  /** Frames sent and not acknowledged, oldest first. */
  private unacked: Frame[] = [];
  private batch = 0;
  private stream: { res: http.ServerResponse; frames: number; held: string } | null = null;
  private poll: { res: http.ServerResponse; reply: Message } | null = null;

  constructor() {
    this.server = http.createServer((req, res) => this.request(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/bayeux`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }

  /** Publishes from the server side to the session, if subscribed. */
  publish(channel: string, data: unknown): void {
    if (!this.subscriptions.has(channel)) return;
    this.queue.push({ channel, data });
    setImmediate(() => this.flush());
  }

  /**
   * Ends the session and its stream: with `advice`, in a last frame holding a connect reply
   * that advises it; without, the stream just ends (the next open is answered `402`).
   */
  endSession(advice?: 'handshake' | 'none'): void {
    this.clientId = '';
    this.subscriptions.clear();
    if (advice !== undefined) {
      this.write(
        `${JSON.stringify([{ channel: '/meta/connect', successful: true, advice: { reconnect: advice } }])}\n`,
      );
    }
    this.end();
  }

  private request(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const messages = JSON.parse(body) as Message[];
      if (req.url === '/bayeux/stream') return this.open(messages[0] as Message, res);
      this.posted.push(...messages);
      const replies: Message[] = [];
      for (const m of messages) {
        if (m.channel === '/meta/connect') return this.longPoll(m, res);
        replies.push(this.handle(m));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(replies));
    });
  }

  private handle(m: Message): Message {
    const reply: Message = { channel: m.channel, id: m.id, successful: true };
    if (m.channel === '/meta/handshake') {
      this.clientId = `c${Date.now()}`;
      this.unacked = [];
      this.batch = 0;
      return {
        ...reply,
        clientId: this.clientId,
        version: '1.0',
        supportedConnectionTypes: ['streaming', 'long-polling'],
        advice: { reconnect: 'retry', interval: 0, timeout: 30000 },
        ext: { ack: { enabled: true, batch: 0, frames: true } },
      };
    }
    if (m.channel === '/meta/subscribe') {
      this.subscriptions.add(m.subscription as string);
      return { ...reply, subscription: m.subscription };
    }
    this.publish(m.channel, m.data);
    return reply;
  }

  /** Forgets the frames up to `n`; what came after is sent again first. */
  private acknowledge(n: unknown): void {
    if (typeof n !== 'number') return;
    const resend: Message[] = [];
    for (const f of this.unacked) if (f.n > n) resend.push(...f.messages);
    this.unacked = [];
    this.queue = [...resend, ...this.queue];
  }

  private open(connect: Message, res: http.ServerResponse): void {
    this.opened.push(connect);
    res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
    });
    const previous = this.stream;
    this.stream = { res, frames: 0, held: '' };
    previous?.res.end();
    this.write(`${' '.repeat(2048)}\n`);
    const reply: Message = { channel: '/meta/connect', id: connect.id, successful: true };
    if (connect.clientId !== this.clientId) {
      this.write(
        `${JSON.stringify([{ ...reply, successful: false, error: '402::Unknown client', advice: { reconnect: 'handshake' } }])}\n`,
      );
      this.end();
      return;
    }
    this.acknowledge(connect.ext?.ack);
    this.write(
      `${JSON.stringify([{ ...reply, advice: { reconnect: 'retry', interval: 0, timeout: 30000 } }])}\n`,
    );
    this.flush();
  }

  private write(text: string): void {
    const stream = this.stream;
    if (stream === null) return;
    if (this.buffer) stream.held += text;
    else stream.res.write(text);
  }

  private end(): void {
    const stream = this.stream;
    if (stream === null) return;
    this.stream = null;
    stream.res.end(stream.held);
  }

  private flush(): void {
    if (this.queue.length === 0) return;
    if (this.poll !== null) {
      const { res, reply } = this.poll;
      this.poll = null;
      res.end(JSON.stringify(this.numbered(reply)));
      return;
    }
    const stream = this.stream;
    if (stream === null) return;
    const messages = this.queue.splice(0);
    const n = ++this.batch;
    this.unacked.push({ n, messages });
    this.write(`${JSON.stringify([...messages, { channel: '/meta/ack', ext: { ack: n } }])}\n`);
    stream.frames++;
    if (this.cutAfter > 0 && --this.cutAfter === 0) {
      // The frame is written, then the connection dies under it.
      this.stream = null;
      stream.res.socket?.destroy();
    } else if (this.recycleAfter > 0 && stream.frames >= this.recycleAfter) {
      const last = {
        channel: '/meta/connect',
        successful: true,
        advice: { reconnect: 'retry', interval: 0 },
      };
      this.write(`${JSON.stringify([last])}\n`);
      this.end();
    }
  }

  /** Long-polling, CometD's way with ack: deliveries in numbered connect replies. */
  private longPoll(m: Message, res: http.ServerResponse): void {
    const ack = m.ext?.ack;
    if (typeof ack === 'number') this.acknowledge(ack);
    const reply: Message = {
      channel: '/meta/connect',
      id: m.id,
      successful: true,
      advice: { reconnect: 'retry', interval: 0, timeout: 30000 },
    };
    if (this.stream !== null) this.end();
    this.poll?.res.end(JSON.stringify([{ ...this.poll.reply, ext: { ack: this.batch } }]));
    this.poll = { res, reply };
    if (m.advice?.timeout === 0 || this.queue.length > 0) {
      this.poll = null;
      res.end(JSON.stringify(this.numbered(reply)));
    }
  }

  /** A connect reply numbered as the next batch, with the queue, remembered until acknowledged. */
  private numbered(reply: Message): Message[] {
    const messages = this.queue.splice(0);
    const n = ++this.batch;
    if (messages.length > 0) this.unacked.push({ n, messages });
    return [{ ...reply, ext: { ack: n } }, ...messages];
  }
}
