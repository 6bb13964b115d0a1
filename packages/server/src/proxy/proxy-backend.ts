/**
 * One call of a proxy hook: POST the request as JSON to the backend, bounded by the
 * endpoint's timeout, and read its verdict. A verdict is a 2xx JSON body: `{ "result": … }`
 * allows (with what the hook may use), `{ "error": "<code>:<args>:<message>" }` (or
 * `{ "error": { "code", "message" } }`) refuses with that Bayeux error. Anything else — no
 * answer in time, a connection error, a non-2xx status, a body that is no verdict — is a
 * failure of the backend, answered to the client as a Bayeux error; nothing waits longer
 * than the timeout and nothing throws past the hook.
 */
import { formatError } from '@bayou/protocol';
import { BayeuxReplyError } from '../errors.js';
import type { ProxyHookName, ResolvedEndpoint } from './proxy-options.js';

export type ProxyOutcome = 'allowed' | 'denied' | 'failed' | 'timeout';

/** Calls per hook and outcome, read by the metrics. */
export type ProxyStats = Record<ProxyHookName, Record<ProxyOutcome, number>>;

export function emptyProxyStats(): ProxyStats {
  const zero = (): Record<ProxyOutcome, number> => ({ allowed: 0, denied: 0, failed: 0, timeout: 0 });
  return { connect: zero(), subscribe: zero(), publish: zero(), rpc: zero() };
}

/** A refusal or failure of a proxy hook, carrying the Bayeux error for the reply. */
export class ProxyHookError extends BayeuxReplyError {
  override name = 'ProxyHookError';
}

const BAYEUX_ERROR = /^\d{3}:[^:]*:./;

/** The Bayeux error a verdict's `error` names, or `null` when it is not one. */
function verdictError(error: unknown): string | null {
  if (typeof error === 'string') return BAYEUX_ERROR.test(error) ? clean(error) : null;
  if (error === null || typeof error !== 'object') return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (!Number.isInteger(code) || (code as number) < 100 || (code as number) > 999) return null;
  if (typeof message !== 'string' || message === '') return null;
  return `${code}::${clean(message)}`;
}

/** A backend's message as a Bayeux error's message: no control characters, at most 256 characters. */
function clean(text: string): string {
  let out = '';
  for (const ch of text.slice(0, 256)) out += ch.charCodeAt(0) < 32 ? '_' : ch;
  return out;
}

export class ProxyBackend {
  constructor(
    readonly hook: ProxyHookName,
    private readonly endpoint: ResolvedEndpoint,
    private readonly stats: ProxyStats,
  ) {}

  /** Resolves with the verdict's `result` (an object, `{}` when absent); rejects with a `ProxyHookError`. */
  async call(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    let body: unknown;
    try {
      const res = await fetch(this.endpoint.url, {
        method: 'POST',
        headers: { ...this.endpoint.headers, 'content-type': 'application/json' },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(this.endpoint.timeout),
      });
      const text = await res.text();
      if (!res.ok) return this.fail('failed');
      body = JSON.parse(text);
    } catch (err) {
      return this.fail((err as Error).name === 'TimeoutError' ? 'timeout' : 'failed');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return this.fail('failed');
    const verdict = body as { result?: unknown; error?: unknown };
    if (verdict.error !== undefined && verdict.error !== null) {
      const error = verdictError(verdict.error);
      if (error === null) return this.fail('failed');
      this.stats[this.hook].denied++;
      throw new ProxyHookError(error);
    }
    if (!('result' in verdict)) return this.fail('failed');
    const result = verdict.result;
    if (result !== null && result !== undefined && (typeof result !== 'object' || Array.isArray(result)))
      return this.fail('failed');
    this.stats[this.hook].allowed++;
    return (result ?? {}) as Record<string, unknown>;
  }

  private fail(outcome: 'failed' | 'timeout'): never {
    this.stats[this.hook][outcome]++;
    throw new ProxyHookError(
      formatError(outcome === 'timeout' ? 'backendTimeout' : 'backendFailed', [this.hook]),
    );
  }
}
