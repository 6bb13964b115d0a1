/**
 * Where the shared build (`src/shared.ts`) plugs the cross-tab connection into
 * `BayouClient`, so that the main bundle carries only this hook.
 */
import type { BayouClientOptions } from './options.js';

/** Makes the tab's client of a shared connection, or `null` when the browser cannot share. */
export type ShareJoin = (url: string, options: BayouClientOptions) => object | null;

let join: ShareJoin | null = null;

export function setShareJoin(fn: ShareJoin): void {
  join = fn;
}

/** The shared client for `sharedConnection`, or `null` for a connection of its own. */
export function joinShared(url: string, options: BayouClientOptions): object | null {
  if (join === null) {
    throw new TypeError('BayouClient: "sharedConnection" needs @bayou/client/shared (bayou-shared.min.js)');
  }
  return join(url, options);
}
