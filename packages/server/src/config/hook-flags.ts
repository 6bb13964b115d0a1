/**
 * The flags of `bayou start` for backend hooks over HTTP: webhooks (events POSTed to a
 * receiver) and proxy hooks (connect, subscribe, publish and rpc decided by a backend).
 * Part of the one flag table (`FLAGS` in `flags.ts`); the rest of each (batching,
 * retries, per-hook timeouts and headers) lives in the config file.
 */
import { DEFAULT_PROXY_TIMEOUT } from '../proxy/proxy-options.js';
import { type FlagSpec, positive, shown } from './flag-spec.js';

const httpUrl = (v: unknown) =>
  /^https?:\/\/./.test(v as string) ? null : 'must be an http:// or https:// URL';

/** The URL of one proxy hook's backend (`proxy.<hook>.url`). */
function proxyUrl(hook: string, help: string): FlagSpec {
  return {
    flag: `proxy-${hook}-url`,
    env: [`BAYOU_PROXY_${hook.toUpperCase()}_URL`],
    key: `proxy.${hook}.url`,
    kind: 'string',
    value: '<url>',
    help,
    default: 'none',
    check: httpUrl,
  };
}

export const HOOK_FLAGS: readonly FlagSpec[] = [
  {
    flag: 'webhook-url',
    env: ['BAYOU_WEBHOOK_URL'],
    key: 'webhooks.url',
    kind: 'string',
    value: '<url>',
    help: 'POST session, channel and presence events to this URL, batched and retried (webhooks.* in the config file for the rest)',
    default: 'none (no webhooks)',
    check: httpUrl,
  },
  {
    flag: 'webhook-secret',
    env: ['BAYOU_WEBHOOK_SECRET'],
    key: 'webhooks.secret',
    kind: 'string',
    value: '<secret>',
    help: 'sign each webhook body: X-Bayou-Signature: sha256=<hex HMAC-SHA256 of the body> (prefer the env variable)',
    default: 'none (unsigned)',
    secret: true,
  },
  proxyUrl('connect', 'a backend decides each handshake and gives the user and channel permissions'),
  proxyUrl('subscribe', 'a backend decides each subscription'),
  proxyUrl('publish', 'a backend decides each client publish and may replace its data'),
  proxyUrl('rpc', 'a backend answers /service/** calls no handler of the app serves'),
  {
    flag: 'proxy-timeout',
    env: ['BAYOU_PROXY_TIMEOUT'],
    key: 'proxy.timeout',
    kind: 'int',
    value: '<ms>',
    help: 'how long a proxy backend has to answer before the client gets a Bayeux error (504:<hook>:backend_timeout)',
    default: shown(DEFAULT_PROXY_TIMEOUT),
    check: positive,
  },
];
