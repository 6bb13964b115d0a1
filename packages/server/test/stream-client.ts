/**
 * Reads `streaming` and `eventsource` responses for the server's tests: the raw bytes
 * (padding, heartbeats) as well as the frames, so tests can check the wire itself.
 * Everything else a streaming session sends goes through `TestClient` over long-polling.
 */
import { type Msg, TestClient } from './test-client.js';

export class StreamReader {
  status = 0;
  headers: Headers = new Headers();
  /** Every line (NDJSON) or event block (SSE) received, raw, in order. */
  readonly lines: string[] = [];
  /** The messages of each frame, in order. */
  readonly frames: Msg[][] = [];
  /** Bytes received, padding and heartbeats included. */
  bytes = 0;
  done = false;
  private buffer = '';
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];
  private readonly abort = new AbortController();
  readonly ended: Promise<void>;
  private endedResolve: () => void = () => undefined;

  constructor(readonly kind: 'streaming' | 'eventsource') {
    this.ended = new Promise((resolve) => {
      this.endedResolve = resolve;
    });
  }

  get messages(): Msg[] {
    return this.frames.flat();
  }

  /** Resolves once `check` holds (checked after every chunk) or the stream ended. */
  until(check: () => boolean): Promise<void> {
    if (check() || this.done) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** Resolves with the first message matching `pred`, or rejects when the stream ends first. */
  async waitFor(pred: (m: Msg) => boolean): Promise<Msg> {
    await this.until(() => this.messages.some(pred));
    const found = this.messages.find(pred);
    if (found === undefined)
      throw new Error(`stream ended without the message; got ${JSON.stringify(this.frames)}`);
    return found;
  }

  /** Cuts the stream as a network failure would. */
  cut(): void {
    this.abort.abort();
  }

  async read(response: Response): Promise<void> {
    this.status = response.status;
    this.headers = response.headers;
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    try {
      while (reader !== undefined) {
        const { value, done } = await reader.read();
        if (done) break;
        this.bytes += value.length;
        this.take(decoder.decode(value, { stream: true }));
      }
    } catch {
      // Cut by `cut()` or the server: the stream is over either way.
    }
    this.done = true;
    this.notify();
    this.endedResolve();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  private take(text: string): void {
    this.buffer += text;
    const sep = this.kind === 'streaming' ? '\n' : '\n\n';
    for (let at = this.buffer.indexOf(sep); at >= 0; at = this.buffer.indexOf(sep)) {
      const line = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + sep.length);
      this.lines.push(line);
      const json = this.kind === 'streaming' ? line : dataOf(line);
      if (json !== null && json.trim() !== '') this.frames.push(JSON.parse(json) as Msg[]);
    }
    this.notify();
  }

  private notify(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i] as { check: () => boolean; resolve: () => void };
      if (this.done || w.check()) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}

/** The `data:` of one SSE event block, `null` for a comment or a field without data. */
function dataOf(block: string): string | null {
  const data = block
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
  return data.length === 0 ? null : data.join('\n');
}

/** Opens `POST <base>/bayeux/stream` with `connect` (one message) and starts reading it. */
export async function openStream(
  base: string,
  connect: Msg,
  headers: Record<string, string> = {},
): Promise<StreamReader> {
  const reader = new StreamReader('streaming');
  const response = await fetch(`${base}/bayeux/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify([connect]),
    signal: reader.signal,
  });
  void reader.read(response);
  return reader;
}

/** Opens Faye's EventSource request, `GET <base>/bayeux/<clientId>`, and starts reading it. */
export async function openEventSource(
  base: string,
  clientId: string,
  headers: Record<string, string> = {},
): Promise<StreamReader> {
  const reader = new StreamReader('eventsource');
  const response = await fetch(`${base}/bayeux/${clientId}`, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: reader.signal,
  });
  void reader.read(response);
  return reader;
}

/** A long-polling `TestClient` handshaken for `type`, with no connect loop: its stream carries deliveries. */
export async function streamingClient(
  base: string,
  type: 'streaming' | 'eventsource' = 'streaming',
  ext?: Record<string, unknown>,
): Promise<TestClient> {
  const client = new TestClient(base, 'long-polling');
  const reply = await client.request({
    channel: '/meta/handshake',
    version: '1.0',
    supportedConnectionTypes: [type, 'long-polling'],
    ...(ext === undefined ? {} : { ext }),
  });
  if (reply.successful !== true) throw new Error(`handshake failed: ${JSON.stringify(reply)}`);
  client.clientId = reply.clientId as string;
  return client;
}

/** The connect that opens a stream for `client`. */
export function streamConnect(client: TestClient, ext?: Record<string, unknown>): Msg {
  return {
    channel: '/meta/connect',
    clientId: client.clientId,
    connectionType: 'streaming',
    id: 'open',
    ...(ext === undefined ? {} : { ext }),
  };
}

/** The cookie header `client` would send (its `BAYEUX_BROWSER`). */
export function cookieOf(client: TestClient): Record<string, string> {
  return client.cookie === null ? {} : { cookie: client.cookie };
}
