// @ts-check
// The standard-client long-polling generator: each simulated client is what a browser tab
// looks like to the server. It has its own keep-alive `http.Agent` with at most 2 sockets
// (the held /meta/connect on one, everything else on the other, queued when both are
// busy), its own cookie jar (so it sends back the BAYEUX_BROWSER cookie it was given), and
// sends a current Chrome's request headers. The Bayeux conversation is the load tester's own
// (src/bayeux-lp-driver.ts, over the tabs of src/lp-http.ts's TabsHttp), so deliveries,
// responses and lost sessions reach the loadtest's statistics exactly as the lean driver's do.
import http from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { longPollingOver } from '../../dist/bayeux-lp-driver.js';
import { addressFor, TabsHttp } from '../../dist/lp-http.js';
import { CookieJar } from './cookie-jar.mjs';

/** @import { DriverFactory, DriverOptions } from '../../dist/driver.js' */

/** A current desktop Chrome on Linux, as of the bench's writing. */
export const CHROME_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/**
 * Headers Chrome sends with a same-origin `fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })`,
 * and the run's `--header`s.
 * @param {URL} url
 * @param {Readonly<Record<string, string>>} [extra]
 * @returns {Record<string, string>}
 */
export function browserHeaders(url, extra = {}) {
  const origin = `${url.protocol}//${url.host}`;
  return {
    Accept: '*/*',
    'Accept-Encoding': 'gzip, deflate, br',
    'Accept-Language': 'en-US,en;q=0.9',
    'Content-Type': 'application/json',
    Origin: origin,
    Referer: `${origin}/`,
    'Sec-Ch-Ua': '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
    'Sec-Ch-Ua-Mobile': '?0',
    'Sec-Ch-Ua-Platform': '"Linux"',
    'Sec-Fetch-Dest': 'empty',
    'Sec-Fetch-Mode': 'cors',
    'Sec-Fetch-Site': 'same-origin',
    'User-Agent': CHROME_USER_AGENT,
    ...extra,
  };
}

/**
 * A response body as sent, undone of its `Content-Encoding` (`undefined` for none).
 * @param {string | undefined} encoding
 * @param {Buffer} body
 * @returns {Buffer}
 */
export function decode(encoding, body) {
  switch (encoding) {
    case 'gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      return body;
  }
}

/**
 * What a write on a keep-alive socket the server had just closed fails with.
 * @param {NodeJS.ErrnoException} error
 */
function staleSocketError(error) {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

/** One simulated browser tab on node:http: its connections, its cookies, Chrome's headers. */
export class StandardTab {
  /** Requests sent again after their reused keep-alive socket turned out closed. */
  staleRetries = 0;
  jar = new CookieJar();

  /**
   * @param {URL} url the Bayeux endpoint (http:)
   * @param {Record<string, string>} headers sent on every request
   * @param {string | undefined} localAddress
   */
  constructor(url, headers, localAddress) {
    this.url = url;
    this.headers = headers;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 2, localAddress });
  }

  /**
   * POSTs a Bayeux batch; resolves with the parsed reply (rejects on HTTP or JSON errors).
   * Like a browser, it sends the request again, once, when it failed on a reused keep-alive
   * socket before any response came: the server had closed that idle socket as the request
   * went out (Node's default `keepAliveTimeout` is 5 s, about how long this client's second
   * socket idles between publishes), so the server never saw the request.
   * @param {string} body
   * @param {boolean} [retried]
   * @returns {Promise<unknown>}
   */
  post(body, retried = false) {
    const url = this.url;
    return new Promise((resolve, reject) => {
      let responded = false;
      /** @type {http.OutgoingHttpHeaders} */
      const headers = { ...this.headers, 'Content-Length': Buffer.byteLength(body) };
      const cookie = this.jar.header(url.pathname);
      if (cookie) headers.Cookie = cookie;
      const req = http.request(
        {
          agent: this.agent,
          method: 'POST',
          hostname: url.hostname,
          port: url.port || 80,
          path: `${url.pathname}${url.search}`,
          headers,
        },
        (res) => {
          responded = true;
          /** @type {Buffer[]} */
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            this.jar.store(res.headers['set-cookie']);
            if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
            try {
              resolve(
                JSON.parse(decode(res.headers['content-encoding'], Buffer.concat(chunks)).toString('utf8')),
              );
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
        if (!responded && !retried && req.reusedSocket && staleSocketError(error)) {
          this.staleRetries++;
          this.post(body, true).then(resolve, reject);
        } else reject(error);
      });
      req.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}

/**
 * A DriverFactory (src/driver.ts) for the loadtest's scenarios: the long-polling
 * conversation with a tab per client, made by `newTab(url, headers, localAddress)`.
 * @param {(url: URL, headers: Record<string, string>, localAddress: string | undefined) => import('../../dist/lp-http.js').PostingTab} newTab
 * @returns {DriverFactory}
 */
export function browserLongPolling(newTab) {
  return longPollingOver((url, /** @type {DriverOptions} */ options) => {
    const headers = browserHeaders(url, options.headers);
    return new TabsHttp((index) => newTab(url, headers, addressFor(options, index)));
  });
}

/** The node:http generator. */
export const standardLongPolling = browserLongPolling(
  (url, headers, localAddress) => new StandardTab(url, headers, localAddress),
);
