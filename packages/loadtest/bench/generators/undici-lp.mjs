// The standard-client long-polling generator on undici, the HTTP client under Node's own
// `fetch`: each simulated client is a browser tab as in standard-lp.mjs (its own keep-alive
// connection pool of at most 2, its own cookie jar, a current Chrome's request headers, the
// same minimal Bayeux), but requests go through undici's `Pool.request` instead of
// `http.request`. Only the connections (`createAgent`) and `post()` differ; the Bayeux
// conversation and the statistics are standard-lp.mjs's.

import { Pool } from 'undici';
import { decode, StandardClient, StandardLpDriver } from './standard-lp.mjs';

/**
 * Whether a request failed on a keep-alive connection the server had just closed: undici's
 * socket error says what the connection had read, and a connection that had read a response
 * before this request's failed had carried an earlier request (node:http's `reusedSocket`).
 */
function staleSocketError(error) {
  const socket = error.socket ?? error.cause?.socket;
  return (
    (error.code === 'UND_ERR_SOCKET' || error.code === 'ECONNRESET' || error.code === 'EPIPE') &&
    socket?.bytesRead > 0
  );
}

export class UndiciClient extends StandardClient {
  createAgent(localAddress) {
    return new Pool(this.driver.url.origin, {
      connections: 2,
      pipelining: 1,
      localAddress,
      // Long-polls are held up to the server's timeout (30 s for every bench server).
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
  }

  /**
   * POSTs a Bayeux batch; resolves with the parsed reply array. Like a browser (and like
   * standard-lp.mjs), it sends the request again, once, when it failed on a reused connection
   * before any response came.
   */
  async post(body, retried = false) {
    const d = this.driver;
    const headers = { ...d.headers };
    const cookie = this.jar.header(d.url.pathname);
    if (cookie) headers.cookie = cookie;
    let res;
    try {
      res = await this.agent.request({
        method: 'POST',
        path: `${d.url.pathname}${d.url.search}`,
        headers,
        body,
      });
    } catch (error) {
      if (!retried && staleSocketError(error)) {
        d.staleRetries++;
        return this.post(body, true);
      }
      throw error;
    }
    const raw = Buffer.from(await res.body.arrayBuffer());
    this.jar.store(res.headers['set-cookie']);
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    return JSON.parse(decode(res.headers['content-encoding'], raw).toString('utf8'));
  }
}

export class UndiciLpDriver extends StandardLpDriver {
  newClient(index) {
    return new UndiciClient(this, index);
  }
}

/** A DriverFactory (src/driver.ts) for the loadtest's scenarios. */
export function undiciLongPolling(options) {
  return new UndiciLpDriver(options);
}
