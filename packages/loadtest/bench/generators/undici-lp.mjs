// @ts-check
// The standard-client long-polling generator on undici, the HTTP client under Node's own
// `fetch`: each simulated client is a browser tab as in standard-lp.mjs (its own keep-alive
// connection pool of at most 2, its own cookie jar, a current Chrome's request headers, the
// load tester's own Bayeux conversation), but requests go through undici's `Pool.request`
// instead of `http.request`. Only the tab differs.

import { Pool } from 'undici';
import { decode, fetchPostHeaders } from '../../dist/browser-tab.js';
import { CookieJar } from '../../dist/cookie-jar.js';
import { browserLongPolling } from './standard-lp.mjs';

/**
 * Whether a request failed on a keep-alive connection the server had just closed: undici's
 * socket error says what the connection had read, and a connection that had read a response
 * before this request's failed had carried an earlier request (node:http's `reusedSocket`).
 * @param {unknown} error
 */
function staleSocketError(error) {
  const e =
    /** @type {{ code?: string, socket?: { bytesRead?: number }, cause?: { socket?: { bytesRead?: number } } }} */ (
      error
    );
  const socket = e.socket ?? e.cause?.socket;
  return (
    (e.code === 'UND_ERR_SOCKET' || e.code === 'ECONNRESET' || e.code === 'EPIPE') &&
    (socket?.bytesRead ?? 0) > 0
  );
}

/** One simulated browser tab on undici. */
export class UndiciTab {
  /** Requests sent again after their reused connection turned out closed. */
  staleRetries = 0;
  jar = new CookieJar();

  /**
   * @param {URL} url the Bayeux endpoint (http:)
   * @param {string | undefined} localAddress
   * @param {Readonly<Record<string, string>>} extraHeaders the run's `--header`s
   */
  constructor(url, localAddress, extraHeaders) {
    this.url = url;
    /** Chrome's headers for a fetch POST, and the run's. */
    this.headers = { ...fetchPostHeaders(url), ...extraHeaders };
    this.agent = new Pool(url.origin, {
      connections: 2,
      pipelining: 1,
      localAddress,
      // Long-polls are held up to the server's timeout (30 s for every bench server).
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
  }

  /**
   * POSTs a Bayeux batch; resolves with the parsed reply. Like a browser (and like
   * standard-lp.mjs), it sends the request again, once, when it failed on a reused connection
   * before any response came.
   * @param {string} body
   * @param {boolean} [retried]
   * @returns {Promise<unknown>}
   */
  async post(body, retried = false) {
    /** @type {Record<string, string>} */
    const headers = { ...this.headers };
    const cookie = this.jar.header(this.url.pathname);
    if (cookie) headers.cookie = cookie;
    let res;
    try {
      res = await this.agent.request({
        method: 'POST',
        path: `${this.url.pathname}${this.url.search}`,
        headers,
        body,
      });
    } catch (error) {
      if (!retried && staleSocketError(error)) {
        this.staleRetries++;
        return this.post(body, true);
      }
      throw error;
    }
    const raw = Buffer.from(await res.body.arrayBuffer());
    this.jar.store(res.headers['set-cookie']);
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    const encoding = res.headers['content-encoding'];
    return JSON.parse(decode(typeof encoding === 'string' ? encoding : undefined, raw).toString('utf8'));
  }

  close() {
    void this.agent.destroy();
  }
}

/** A DriverFactory (src/driver.ts) for the loadtest's scenarios. */
export const undiciLongPolling = browserLongPolling(
  (url, localAddress, headers) => new UndiciTab(url, localAddress, headers),
);
