/**
 * The `proxy` option: backend endpoints that decide connects (handshakes), subscriptions
 * and publishes, and answer `/service/**` calls, over HTTP.
 */

import { SERVER_DEFAULTS } from '../defaults.js';
import { rejectUnknownKeys, scopedInvalid } from '../option-errors.js';
import { badEndpoint } from '../webhooks/webhook-options.js';

export type ProxyHookName = 'connect' | 'subscribe' | 'publish' | 'rpc';
export const PROXY_HOOKS: readonly ProxyHookName[] = ['connect', 'subscribe', 'publish', 'rpc'];

export interface ProxyEndpoint {
  /** The backend URL the server POSTs to (`http://` or `https://`). */
  url: string;
  /** ms the backend has to answer before the client gets `504:<hook>:backend_timeout`. Default: `proxy.timeout`. */
  timeout?: number;
  /** Extra request headers (e.g. `authorization`), over `proxy.headers`. Default: none. */
  headers?: Record<string, string>;
}

export interface ProxyOptions {
  /** Decides each handshake and gives the session its user and channel permissions. */
  connect?: string | ProxyEndpoint;
  /** Decides each subscription. */
  subscribe?: string | ProxyEndpoint;
  /** Decides each client publish, and may replace its data. */
  publish?: string | ProxyEndpoint;
  /** Answers `/service/**` calls no handler of the application serves. */
  rpc?: string | ProxyEndpoint;
  /** Default ms each backend has to answer. Default `5000`. */
  timeout?: number;
  /** Headers sent to every backend. Default: none. */
  headers?: Record<string, string>;
}

export interface ResolvedEndpoint {
  readonly url: string;
  readonly timeout: number;
  readonly headers: Readonly<Record<string, string>>;
}

export type ResolvedProxyOptions = Readonly<Partial<Record<ProxyHookName, ResolvedEndpoint>>>;

/** `proxy.timeout`'s default (defined in `defaults.ts`). */
export const DEFAULT_PROXY_TIMEOUT = SERVER_DEFAULTS.proxy.timeout;

const invalid: (name: string, expected: string) => never = scopedInvalid('proxy');

function unknownKeys(o: Record<string, unknown>, known: readonly string[], where: string): void {
  rejectUnknownKeys(o, known, where);
}

function checkHeaders(h: unknown, where: string): Record<string, string> {
  if (h === undefined) return {};
  if (h === null || typeof h !== 'object' || Object.values(h).some((v) => typeof v !== 'string'))
    invalid(where, 'an object of header names to strings');
  return { ...(h as Record<string, string>) };
}

function checkTimeout(t: unknown, where: string): number | undefined {
  if (t === undefined) return undefined;
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 1) invalid(where, 'a positive number of ms');
  return t;
}

export function resolveProxyOptions(input: unknown): ResolvedProxyOptions {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    invalid('', 'an object { connect?, subscribe?, publish?, rpc?, timeout?, headers? }');
  const o = input as Record<string, unknown>;
  unknownKeys(o, [...PROXY_HOOKS, 'timeout', 'headers'], 'proxy');
  const timeout = checkTimeout(o.timeout, '.timeout') ?? DEFAULT_PROXY_TIMEOUT;
  const headers = checkHeaders(o.headers, '.headers');
  const out: Partial<Record<ProxyHookName, ResolvedEndpoint>> = {};
  for (const hook of PROXY_HOOKS) {
    const given = o[hook];
    if (given === undefined) continue;
    const e = (typeof given === 'string' ? { url: given } : given) as Record<string, unknown>;
    if (e === null || typeof e !== 'object') invalid(`.${hook}`, 'a URL or { url, timeout?, headers? }');
    unknownKeys(e, ['url', 'timeout', 'headers'], `proxy.${hook}`);
    const bad = badEndpoint(e.url);
    if (bad !== null) invalid(`.${hook}.url`, bad);
    out[hook] = Object.freeze({
      url: e.url as string,
      timeout: checkTimeout(e.timeout, `.${hook}.timeout`) ?? timeout,
      headers: Object.freeze({ ...headers, ...checkHeaders(e.headers, `.${hook}.headers`) }),
    });
  }
  return Object.freeze(out);
}
