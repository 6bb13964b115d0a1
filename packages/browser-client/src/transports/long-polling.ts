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
  type FetchResponseLike,
  parseMessages,
  type Transport,
  type TransportContext,
  type TransportFactory,
} from './transport.js';

function failure(message: string, status: number | null = null): BayouError {
  return new BayouError(ErrorCodes.TRANSPORT, `long-polling: ${message}`, null, status);
}

/** The error for an HTTP answer that is not a success: its status, the server's `error`, `Retry-After`. */
export async function httpFailure(
  response: FetchResponseLike,
  fail: (message: string, status: number) => BayouError,
): Promise<BayouError> {
  const body = await response.text().catch(() => '');
  const error = fail(`HTTP ${response.status} ${/"error":("[^"]*")/.exec(body)?.[1] ?? ''}`, response.status);
  const wait = Number(response.headers?.get('retry-after'));
  if (wait > 0) error.retryAfter = wait * 1000;
  return error;
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
      .then(async (response) => {
        if (!response.ok) throw await httpFailure(response, failure);
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
        async (err: unknown) => {
          let error = err instanceof BayouError ? err : failure(String(err));
          // A handshake a browser failed blindly (CORS hides a refusal): ask why, without cookies.
          if (error !== err && messages[0]?.channel === META_HANDSHAKE) error = await this.diagnose(error);
          if (this.finish(controller)) return;
          // A connect or handshake tests the link itself; any other request failed alone.
          if (messages.some(carriesSession)) this.context.onFailure(this, error);
          else this.context.onRequestFailure(this, messages, error);
        },
      )
      .finally(() => {
        if (this.draining && this.inFlight.size === 0) this.close();
      });
  }

  /**
   * One request a page may send to another origin without a preflight or cookies: a Bayou
   * server answers it with a readable status when it refuses the page's origin (`403`).
   * The error has that status; `error` stays when this request fails blindly too.
   */
  private async diagnose(error: BayouError): Promise<BayouError> {
    try {
      // A string body goes as text/plain: a simple request.
      const init = { method: 'POST', body: '[]', credentials: 'omit' };
      const fetch = this.fetch as FetchFunction; // called unbound: a browser's fetch refuses another `this`
      const response = await fetch(this.context.url, init as never);
      return response.ok ? error : await httpFailure(response, failure);
    } catch {
      return error;
    }
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
