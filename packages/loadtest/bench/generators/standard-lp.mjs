// @ts-check
// The standard-client long-polling generator: each simulated client is what a browser tab
// looks like to the server (src/browser-tab.ts): its own keep-alive `http.Agent` with at most
// 2 sockets (the held /meta/connect on one, everything else on the other, queued when both
// are busy), its own cookie jar (so it sends back the BAYEUX_BROWSER cookie it was given), and
// a current Chrome's request headers. The Bayeux conversation is the load tester's own
// (src/bayeux-lp-driver.ts, over the tabs of src/lp-http.ts's TabsHttp), so deliveries,
// responses and lost sessions reach the loadtest's statistics exactly as the lean driver's do.
import { longPollingOver } from '../../dist/bayeux-lp-driver.js';
import { BrowserTab } from '../../dist/browser-tab.js';
import { addressFor, TabsHttp } from '../../dist/lp-http.js';

/** @import { DriverFactory, DriverOptions } from '../../dist/driver.js' */
/** @import { PostingTab } from '../../dist/lp-http.js' */

/**
 * A DriverFactory (src/driver.ts) for the loadtest's scenarios: the long-polling
 * conversation with a tab per client, made by `newTab(url, localAddress, headers)` (the
 * run's `--header`s).
 * @param {(url: URL, localAddress: string | undefined, headers: Readonly<Record<string, string>>) => PostingTab} newTab
 * @returns {DriverFactory}
 */
export function browserLongPolling(newTab) {
  return longPollingOver((url, /** @type {DriverOptions} */ options) => {
    const headers = options.headers ?? {};
    return new TabsHttp((index) => newTab(url, addressFor(options, index), headers));
  });
}

/** The node:http generator. */
export const standardLongPolling = browserLongPolling(
  (url, localAddress, headers) => new BrowserTab(url, localAddress, headers),
);
