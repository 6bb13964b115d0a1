/**
 * How a long-polling driver's requests travel, apart from what they say: the Bayeux
 * conversation (bayeux-lp-driver.ts) is written once over this seam. The load tester's own
 * `LeanHttp` pipelines pre-formatted requests over raw sockets; the bench's browser-like
 * generators (bench/generators/) give each client a browser tab's connections instead.
 * Handlers take a context argument, as HttpConnection's do, so the lean path needs no
 * closure per request.
 */
import type { Message } from '@bayou/protocol';
import type { DriverOptions } from './driver.js';
import { HttpConnection, type HttpResponse } from './http-connection.js';

/** Settles one request with the transport's response `R`; `ctx` is whatever the caller passed. */
export type LpHandler<C, R> = (ctx: C, error: Error | undefined, response: R | undefined) => void;

export interface LpHttp<R> {
  /** Sends client `index`'s held /meta/connect on the connection it holds for it. */
  poll<C>(index: number, body: string, cookie: string | undefined, done: LpHandler<C, R>, ctx: C): void;
  /** Sends any other batch of client `index` (handshake, subscribe, publish, disconnect). */
  send<C>(index: number, body: string, cookie: string | undefined, done: LpHandler<C, R>, ctx: C): void;
  /** The messages of a response; throws when it failed (an HTTP error status, a body that is not JSON). */
  replies(response: R): Message[];
  /**
   * The cookie a handshake response set, for the driver to send on the client's later
   * requests; undefined when the transport keeps each client's cookies itself.
   */
  cookie(response: R): string | undefined;
  /** Ends client `index`'s own connections (after a failed handshake, or at close). */
  drop(index: number): void;
  /** Ends the shared connections; called once, after every client's drop. */
  close(): void;
}

/** Makes the transport of one driver, for its endpoint (`url`, already http(s)). */
export type LpHttpFactory<R> = (url: URL, options: DriverOptions) => LpHttp<R>;

/** Shared connections for everything but the held polls. */
const POOL_SIZE = 16;

/** The source address for connection `index`, spread over `--local-addresses`. */
export function addressFor(
  options: Pick<DriverOptions, 'localAddresses'>,
  index: number,
): string | undefined {
  const addrs = options.localAddresses;
  return addrs.length > 0 ? addrs[index % addrs.length] : undefined;
}

/**
 * The lean transport: each client's held poll on a connection of its own; handshakes,
 * subscribes, publishes and disconnects pipelined over a small shared pool.
 */
export class LeanHttp implements LpHttp<HttpResponse> {
  private readonly pool: HttpConnection[];
  private readonly polls: (HttpConnection | undefined)[] = [];

  constructor(
    private readonly url: URL,
    private readonly options: DriverOptions,
  ) {
    this.pool = Array.from(
      { length: POOL_SIZE },
      (_, i) => new HttpConnection(url, addressFor(options, i), options.headers),
    );
  }

  poll<C>(
    index: number,
    body: string,
    cookie: string | undefined,
    done: LpHandler<C, HttpResponse>,
    ctx: C,
  ): void {
    let conn = this.polls[index];
    if (conn === undefined) {
      conn = new HttpConnection(this.url, addressFor(this.options, index), this.options.headers);
      this.polls[index] = conn;
    }
    conn.request(body, cookie, done, ctx);
  }

  send<C>(
    index: number,
    body: string,
    cookie: string | undefined,
    done: LpHandler<C, HttpResponse>,
    ctx: C,
  ): void {
    this.pool[index % POOL_SIZE]!.request(body, cookie, done, ctx);
  }

  replies(response: HttpResponse): Message[] {
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    return JSON.parse(response.body) as Message[];
  }

  cookie(response: HttpResponse): string | undefined {
    return response.cookie;
  }

  drop(index: number): void {
    this.polls[index]?.close();
    this.polls[index] = undefined;
  }

  close(): void {
    for (const conn of this.pool) conn.close();
  }
}

export const leanHttp: LpHttpFactory<HttpResponse> = (url, options) => new LeanHttp(url, options);

/** A browser-like client's connections (the bench's tabs): POSTs a batch, resolves with the parsed reply. */
export interface PostingTab {
  post(body: string): Promise<unknown>;
  close(): void;
}

/**
 * Every client on a tab of its own, made by `newTab(index)` at its handshake: all its
 * requests go through the tab, which keeps its cookies itself (so `cookie()` gives none).
 */
export class TabsHttp<T extends PostingTab> implements LpHttp<unknown> {
  readonly tabs: (T | undefined)[] = [];

  constructor(private readonly newTab: (index: number) => T) {}

  /** Client `index`'s tab, made on its first request. */
  tab(index: number): T {
    let tab = this.tabs[index];
    if (tab === undefined) {
      tab = this.newTab(index);
      this.tabs[index] = tab;
    }
    return tab;
  }

  poll<C>(
    index: number,
    body: string,
    _cookie: string | undefined,
    done: LpHandler<C, unknown>,
    ctx: C,
  ): void {
    this.tab(index)
      .post(body)
      .then(
        (reply) => done(ctx, undefined, reply),
        (error: Error) => done(ctx, error, undefined),
      );
  }

  send<C>(
    index: number,
    body: string,
    cookie: string | undefined,
    done: LpHandler<C, unknown>,
    ctx: C,
  ): void {
    this.poll(index, body, cookie, done, ctx);
  }

  replies(response: unknown): Message[] {
    if (!Array.isArray(response)) throw new Error('the reply is not a JSON array of messages');
    return response as Message[];
  }

  cookie(): string | undefined {
    return undefined;
  }

  drop(index: number): void {
    this.tabs[index]?.close();
    this.tabs[index] = undefined;
  }

  close(): void {}
}
