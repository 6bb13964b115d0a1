// The standard-client long-polling generator: each simulated client is what a browser tab
// looks like to the server. It has its own keep-alive `http.Agent` with at most 2 sockets
// (the held /meta/connect on one, everything else on the other, queued when both are
// busy), its own cookie jar (so it sends back the BAYEUX_BROWSER cookie it was given), and
// sends a current Chrome's request headers. It speaks the same minimal Bayeux as the lean
// driver (src/bayeux-lp-driver.ts: handshake, subscribe, a /meta/connect loop whose first
// connect asks for an immediate answer, publish) and reports deliveries, responses and lost
// sessions through the same DriverOptions hooks, so the loadtest's own statistics
// (DeliveryStats: deliveries, loss, duplicates, latency) count them exactly as for the lean one.
import http from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { deliverPayload, toHttpUrl } from '../../dist/driver.js';
import { CookieJar } from './cookie-jar.mjs';

/** A current desktop Chrome on Linux, as of the bench's writing. */
export const CHROME_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Headers Chrome sends with a same-origin `fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })`. */
function browserHeaders(url) {
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
  };
}

/** A response body as sent, undone of its `Content-Encoding` (`undefined` for none). */
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

/** What a write on a keep-alive socket the server had just closed fails with. */
function staleSocketError(error) {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

export class StandardClient {
  constructor(driver, index) {
    this.driver = driver;
    this.index = index;
    this.clientId = '';
    this.open = false;
    this.jar = new CookieJar();
    this.agent = this.createAgent(driver.addressFor(index));
  }

  /** The tab's connections to the server: at most 2, kept alive (undici-lp.mjs has its own). */
  createAgent(localAddress) {
    return new http.Agent({ keepAlive: true, maxSockets: 2, localAddress });
  }

  /**
   * POSTs a Bayeux batch; resolves with the parsed reply array (rejects on HTTP or JSON
   * errors). Like a browser, it sends the request again, once, when it failed on a reused
   * keep-alive socket before any response came: the server had closed that idle socket as
   * the request went out (Node's default `keepAliveTimeout` is 5 s, about how long this
   * client's second socket idles between publishes), so the server never saw the request.
   */
  post(body, retried = false) {
    const d = this.driver;
    return new Promise((resolve, reject) => {
      let responded = false;
      const headers = { ...d.headers, 'Content-Length': Buffer.byteLength(body) };
      const cookie = this.jar.header(d.url.pathname);
      if (cookie) headers.Cookie = cookie;
      const req = http.request(
        {
          agent: this.agent,
          method: 'POST',
          hostname: d.url.hostname,
          port: d.url.port || 80,
          path: `${d.url.pathname}${d.url.search}`,
          headers,
        },
        (res) => {
          responded = true;
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
      req.on('error', (error) => {
        if (!responded && !retried && req.reusedSocket && staleSocketError(error)) {
          d.staleRetries++;
          this.post(body, true).then(resolve, reject);
        } else reject(error);
      });
      req.end(body);
    });
  }

  connect(first) {
    // The first connect asks for an immediate answer, as CometD clients do; later ones are held.
    const advice = first ? ',"advice":{"timeout":0}' : '';
    this.post(
      `[{"channel":"/meta/connect","clientId":"${this.clientId}","connectionType":"long-polling"${advice}}]`,
    ).then(
      (messages) => this.onConnect(messages),
      () => this.onConnect(undefined),
    );
  }

  onConnect(messages) {
    const d = this.driver;
    if (d.closing || !this.open) return;
    if (messages && d.deliverAll(messages)) {
      this.connect(false);
      return;
    }
    this.open = false;
    d.options.onSessionLost?.(this.index);
  }
}

export class StandardLpDriver {
  closing = false;
  clients = [];
  /** Requests sent again after their reused keep-alive socket turned out closed. */
  staleRetries = 0;

  constructor(options) {
    if (options.records) throw new Error('the standard long-polling generator does not decode records');
    this.options = options;
    this.url = new URL(toHttpUrl(options.url));
    this.headers = browserHeaders(this.url);
  }

  addressFor(index) {
    const addrs = this.options.localAddresses;
    return addrs.length > 0 ? addrs[index % addrs.length] : undefined;
  }

  /** Hands a reply's deliveries to the sink; false when it holds an unsuccessful /meta/connect. */
  deliverAll(messages) {
    let connectOk = true;
    let carried = false;
    for (const m of messages) {
      if (m.channel === '/meta/connect') connectOk = m.successful === true;
      else if (m.data !== undefined && !m.channel.startsWith('/meta/')) {
        deliverPayload(this.options.sink, m.data);
        carried = true;
      }
    }
    if (carried) this.options.onFrame?.();
    return connectOk;
  }

  /** The simulated tab for client `index`; undici-lp.mjs gives its own. */
  newClient(index) {
    return new StandardClient(this, index);
  }

  async open(index) {
    const c = this.newClient(index);
    this.clients[index] = c;
    const [reply] = await c.post(
      '[{"channel":"/meta/handshake","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["long-polling"],"id":"1"}]',
    );
    if (!reply?.successful || typeof reply.clientId !== 'string') {
      c.agent.destroy();
      throw new Error(`handshake failed: ${reply?.error ?? 'no reply'}`);
    }
    c.clientId = reply.clientId;
    c.open = true;
    c.connect(true);
  }

  async subscribe(index, channels) {
    const c = this.clients[index];
    if (!c?.open) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"/meta/subscribe","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const replies = await c.post(`[${body.join(',')}]`);
    this.deliverAll(replies);
    const failed = replies.find((m) => m.channel === '/meta/subscribe' && !m.successful);
    if (failed) throw new Error(`subscribe ${String(failed.subscription)} failed: ${failed.error ?? ''}`);
  }

  publish(index, channel, dataJson) {
    const c = this.clients[index];
    if (!c?.open) return;
    // A server may answer a publish with deliveries queued for the publisher.
    c.post(`[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`).then(
      (replies) => this.deliverAll(replies),
      () => {},
    );
  }

  connected() {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close() {
    const open = this.clients.filter((c) => c?.open);
    // Set first: the held polls that the disconnects end are not lost sessions.
    this.closing = true;
    for (let i = 0; i < open.length; i += 200) {
      await Promise.all(
        open
          .slice(i, i + 200)
          .map((c) => c.post(`[{"channel":"/meta/disconnect","clientId":"${c.clientId}"}]`).catch(() => {})),
      );
    }
    for (const c of this.clients) {
      if (!c) continue;
      c.open = false;
      c.agent.destroy();
    }
  }
}

/** A DriverFactory (src/driver.ts) for the loadtest's scenarios. */
export function standardLongPolling(options) {
  return new StandardLpDriver(options);
}
