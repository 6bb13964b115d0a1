/**
 * `@bayou/client/shared`: everything `@bayou/client` exports, plus the shared connection
 * (`sharedConnection: true`): the tabs of one origin, URL and key share one session and
 * one connection (src/shared/). A separate entry, so the main bundle stays lean.
 */
import { setShareJoin } from './share-hook.js';
import { SharedTab } from './shared/tab.js';

export * from './index.js';
export { SharedTab } from './shared/tab.js';

setShareJoin((url, options) => {
  if (options.sharedWorker !== undefined && typeof options.sharedWorker !== 'string') {
    throw new TypeError('BayouClient: option "sharedWorker" must be the URL of bayou-shared-worker.js');
  }
  const canShare =
    typeof navigator !== 'undefined' &&
    typeof navigator.locks?.request === 'function' &&
    typeof BroadcastChannel === 'function' &&
    typeof location !== 'undefined';
  if (!canShare) return null;
  const key = typeof options.sharedConnection === 'string' ? `\n${options.sharedConnection}` : '';
  return new SharedTab(url, options, `bayou\n${new URL(url, location.href).href}${key}`);
});
