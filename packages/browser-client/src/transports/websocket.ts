/** The WebSocket transport: one frame per batch, each frame a JSON array of messages. */
import { BayouError, ErrorCodes } from '../errors.js';
import type { Message } from '../types.js';
import {
  parseMessages,
  type Transport,
  type TransportContext,
  type TransportFactory,
  type WebSocketLike,
} from './transport.js';

const OPEN = 1;

/** `http://h/bayeux` → `ws://h/bayeux`; a relative URL resolves against the page. */
export function webSocketUrl(url: string): string {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  const u = new URL(url, base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : u.protocol === 'http:' ? 'ws:' : u.protocol;
  return u.href;
}

function failure(message: string): BayouError {
  return new BayouError(ErrorCodes.TRANSPORT, `websocket: ${message}`);
}

class WebSocketTransport implements Transport {
  readonly name = 'websocket';
  private readonly context: TransportContext;
  private socket: WebSocketLike | null = null;
  private done = false;
  /** Rejects a pending `open()`; cleared once open. */
  private abortOpen: ((error: BayouError) => void) | null = null;

  constructor(context: TransportContext) {
    this.context = context;
  }

  open(timeout: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const Impl =
        this.context.WebSocket ?? (globalThis as { WebSocket?: TransportContext['WebSocket'] }).WebSocket;
      if (!Impl) return reject(failure('no WebSocket implementation (pass the WebSocket option)'));
      let opened = false;
      this.abortOpen = reject;
      const fail = (error: BayouError): void => {
        if (this.done) return;
        if (!opened) {
          this.abortOpen = null;
          reject(error);
        }
        this.close();
        if (opened) this.context.onFailure(this, error);
      };
      const timer = setTimeout(() => fail(failure(`not open after ${timeout} ms`)), timeout);
      try {
        this.socket = new Impl(webSocketUrl(this.context.url));
      } catch (err) {
        clearTimeout(timer);
        return reject(failure(String(err)));
      }
      const socket = this.socket;
      socket.onopen = () => {
        clearTimeout(timer);
        opened = true;
        this.abortOpen = null;
        resolve();
      };
      socket.onerror = () => {
        clearTimeout(timer);
        fail(failure(opened ? 'error' : 'could not open'));
      };
      socket.onclose = ((event: { code?: number }) => {
        clearTimeout(timer);
        fail(failure(`closed (${event.code ?? 'no code'})`));
      }) as (event: never) => void;
      socket.onmessage = ((event: { data: unknown }) => {
        if (this.done) return;
        let messages: Message[];
        try {
          messages = parseMessages(String(event.data));
        } catch {
          return fail(failure('bad frame'));
        }
        this.context.onMessages(messages, this);
      }) as (event: never) => void;
    });
  }

  send(messages: Message[]): void {
    const socket = this.socket;
    if (this.done || !socket || socket.readyState !== OPEN) {
      // Reported asynchronously so a caller never sees its own send re-enter it.
      queueMicrotask(() => this.context.onFailure(this, failure('not open')));
      return;
    }
    socket.send(JSON.stringify(messages));
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    this.abortOpen?.(failure('closed while opening'));
    this.abortOpen = null;
    const socket = this.socket;
    if (!socket) return;
    socket.onopen = socket.onmessage = socket.onclose = null;
    // Some implementations report an error while closing a CONNECTING socket; ignore it.
    socket.onerror = () => {};
    try {
      socket.close(1000);
    } catch {
      // Already closed.
    }
  }

  drain(done?: () => void): void {
    this.close();
    done?.();
  }
}

/** The `websocket` transport; requires a `WebSocket` global or the `WebSocket` option. */
export const websocket: TransportFactory = {
  name: 'websocket',
  create: (context) => new WebSocketTransport(context),
};
