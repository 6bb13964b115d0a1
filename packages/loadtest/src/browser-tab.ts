/**
 * What a browser tab looks like to a Bayeux server over HTTP: its own keep-alive connections
 * (at most 2: the held stream on one, everything else on the other), its own cookie jar (so
 * it sends back the BAYEUX_BROWSER cookie it was given) and a current Chrome's request
 * headers, for a `fetch` POST and for an EventSource. The browser-like stream driver is built
 * on it; the bench's browser-like long-polling generators send the same headers.
 */
import http from 'node:http';
import type { Readable } from 'node:stream';
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib';
import { CookieJar } from './cookie-jar.js';

/** A current desktop Chrome on Linux, as of this driver's writing. */
export const CHROME_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const COMMON = {
  'Accept-Encoding': 'gzip, deflate, br',
  'Accept-Language': 'en-US,en;q=0.9',
  'Sec-Ch-Ua': '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
  'Sec-Ch-Ua-Mobile': '?0',
  'Sec-Ch-Ua-Platform': '"Linux"',
  'Sec-Fetch-Dest': 'empty',
  'Sec-Fetch-Mode': 'cors',
  'Sec-Fetch-Site': 'same-origin',
  'User-Agent': CHROME_USER_AGENT,
};

/** Headers Chrome sends with a same-origin `fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })`. */
export function fetchPostHeaders(url: URL): Record<string, string> {
  const origin = `${url.protocol}//${url.host}`;
  return {
    Accept: '*/*',
    'Content-Type': 'application/json',
    Origin: origin,
    Referer: `${origin}/`,
    ...COMMON,
  };
}

/** Headers Chrome sends with `new EventSource(url)` on the page's own origin (a GET: no Origin). */
export function eventSourceHeaders(url: URL): Record<string, string> {
  return {
    Accept: 'text/event-stream',
    'Cache-Control': 'no-cache',
    Referer: `${url.protocol}//${url.host}/`,
    ...COMMON,
  };
}

/** A whole response body undone of its `Content-Encoding`. */
export function decode(encoding: string | undefined, body: Buffer): Buffer {
  if (encoding === 'gzip') return gunzipSync(body);
  if (encoding === 'deflate') return inflateSync(body);
  if (encoding === 'br') return brotliDecompressSync(body);
  return body;
}

/** A streamed response body undone of its `Content-Encoding`, as it arrives. */
export function decodeStream(encoding: string | undefined, body: Readable): Readable {
  if (encoding === 'gzip') return body.pipe(createGunzip());
  if (encoding === 'deflate') return body.pipe(createInflate());
  if (encoding === 'br') return body.pipe(createBrotliDecompress());
  return body;
}

/** What a write on a keep-alive socket the server had just closed fails with. */
function staleSocketError(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

export class BrowserTab {
  readonly jar = new CookieJar();
  readonly agent: http.Agent;
  /** Requests sent again after their reused keep-alive socket turned out closed. */
  staleRetries = 0;

  constructor(
    readonly url: URL,
    localAddress: string | undefined,
    private readonly extraHeaders: Readonly<Record<string, string>>,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 2, localAddress });
  }

  /** A request to `path` on the tab's connections, with its cookies and `headers`. */
  request(method: string, path: string, headers: Record<string, string | number>): http.ClientRequest {
    const cookie = this.jar.header(path.split('?')[0]!);
    return http.request({
      agent: this.agent,
      method,
      hostname: this.url.hostname,
      port: this.url.port || 80,
      path,
      headers: { ...headers, ...this.extraHeaders, ...(cookie ? { Cookie: cookie } : {}) },
    });
  }

  /**
   * POSTs a Bayeux batch to the endpoint; resolves with the parsed reply. Like a browser, it
   * sends the request again, once, when it failed on a reused keep-alive socket before any
   * response came (the server had closed that idle socket as the request went out).
   */
  post(body: string, retried = false): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let responded = false;
      const headers = { ...fetchPostHeaders(this.url), 'Content-Length': Buffer.byteLength(body) };
      const req = this.request('POST', `${this.url.pathname}${this.url.search}`, headers);
      req.on('response', (res) => {
        responded = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          this.jar.store(res.headers['set-cookie']);
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
          try {
            const text = decode(res.headers['content-encoding'], Buffer.concat(chunks)).toString('utf8');
            resolve(JSON.parse(text));
          } catch (error) {
            reject(error);
          }
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (!responded && !retried && req.reusedSocket && staleSocketError(error)) {
          this.staleRetries++;
          this.post(body, true).then(resolve, reject);
        } else reject(error);
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
