/**
 * The long-polling transport: every batch is one `POST` of a JSON array, answered by a
 * JSON array. `credentials: 'include'` sends the server's `BAYEUX_BROWSER` cookie so one
 * browser shares one long-poll across its tabs.
 */
import { META_CONNECT, META_HANDSHAKE } from '@bayou/protocol';
import { BayouError, ErrorCodes } from '../errors.js';
import type { Message } from '../types.js';
import {
  type FetchFunction,
  parseMessages,
  type Transport,
  type TransportContext,
  type TransportFactory,
} from './transport.js';

function failure(message: string): BayouError {
  return new BayouError(ErrorCodes.TRANSPORT, `long-polling: ${message}`);
}

/** An `AbortController`, typed here so the published types need no DOM library. */
export interface Abort {
  readonly signal: unknown;
  abort(): void;
}

/** The `fetch` init of a POST carrying `messages`. */
export function post(messages: Message[], controller: Abort): never {
  const init = {
    method: 'POST',
    headers: { 'Content-Type': 'application/json;charset=UTF-8' },
    body: JSON.stringify(messages),
    credentials: 'include',
    signal: controller.signal,
  };
  return init as never;
}

function carriesSession(message: Message): boolean {
  return message.channel === META_CONNECT || message.channel === META_HANDSHAKE;
}

/** Also the base of the streaming transport, whose other messages go exactly so. */
export class LongPollingTransport implements Transport {
  readonly name: string = 'long-polling';
  protected readonly context: TransportContext;
  protected readonly inFlight = new Set<Abort>();
  protected done = false;
  protected draining = false;
  private drained: (() => void) | undefined;

  constructor(context: TransportContext) {
    this.context = context;
  }

  protected get fetch(): FetchFunction | undefined {
    return this.context.fetch ?? (globalThis as { fetch?: FetchFunction }).fetch;
  }

  open(): Promise<void> {
    return this.fetch ? Promise.resolve() : Promise.reject(failure('no fetch implementation'));
  }

  send(messages: Message[]): void {
    const fetch = this.fetch;
    if (this.done || !fetch) {
      queueMicrotask(() => this.context.onFailure(this, failure('closed')));
      return;
    }
    const controller = new AbortController();
    this.inFlight.add(controller);
    fetch(this.context.url, post(messages, controller))
      .then((response) => {
        if (!response.ok) throw failure(`HTTP ${response.status}`);
        return response.text();
      })
      .then(
        (text) => {
          if (this.finish(controller)) return;
          let replies: Message[];
          try {
            replies = parseMessages(text);
          } catch {
            return this.context.onFailure(this, failure('bad response'));
          }
          this.context.onMessages(replies, this);
        },
        (err: unknown) => {
          if (this.finish(controller)) return;
          const error = err instanceof BayouError ? err : failure(String(err));
          // A connect or handshake tests the link itself; any other request failed alone.
          if (messages.some(carriesSession)) this.context.onFailure(this, error);
          else this.context.onRequestFailure(this, messages, error);
        },
      )
      .finally(() => {
        if (this.draining && this.inFlight.size === 0) this.close();
      });
  }

  /** Forgets a finished request; true when the transport was closed meanwhile. */
  protected finish(controller: Abort): boolean {
    this.inFlight.delete(controller);
    return this.done;
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    this.drained?.();
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
  }

  drain(done?: () => void): void {
    this.draining = true;
    this.drained = done;
    if (this.done) done?.();
    else if (this.inFlight.size === 0) this.close();
  }
}

/** The `long-polling` transport; uses `fetch` (global or the `fetch` option). */
export const longPolling: TransportFactory = {
  name: 'long-polling',
  create: (context) => new LongPollingTransport(context),
};
