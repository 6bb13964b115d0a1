/**
 * Why `bayou start` could not start, in one line that says what to do: the port in use, a
 * port that needs privileges, an address not of this machine, Redis unreachable. The CLI
 * prints it and exits with code 2 (`cli.ts`); the stack is for `--log-level debug`.
 */
import { BayouConfigError, BayouEngineError } from '../errors.js';

export interface ListenTarget {
  host: string;
  port: number;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A failure of `listen()`: the socket's error code decides the fix. */
function listenFailure(code: string, { host, port }: ListenTarget): string | null {
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is in use — stop the other process, or pass --port <n> (--port 0 picks a free port)`;
    case 'EACCES':
      return `no permission to listen on port ${port} on ${host} — ports below 1024 need privileges: pass --port 8080 (or another port from 1024) and put a proxy in front`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine — pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the host name "${host}" — pass --host with an IP address of this machine (127.0.0.1, 0.0.0.0)`;
    default:
      return null;
  }
}

/** Redis unreachable at start: the engine's message names the Redis; its cause decides the fix. */
function redisFailure(err: BayouEngineError): string {
  const cause = err.cause as { message?: unknown } | undefined;
  const code = codeOf(cause);
  const text = typeof cause?.message === 'string' ? cause.message : '';
  const fix =
    code === 'ECONNREFUSED'
      ? 'is Redis running there? Start it (redis-server), or fix --redis / BAYOU_REDIS_URL'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'the host name does not resolve: fix --redis / BAYOU_REDIS_URL'
        : /WRONGPASS|NOAUTH|NOPERM|invalid password/i.test(text)
          ? 'Redis refused the credentials: fix the user and password in --redis / BAYOU_REDIS_URL'
          : 'check that Redis answers at that address (redis-cli -u <url> ping), or fix --redis / BAYOU_REDIS_URL';
  return `${err.message} — ${fix}; without --redis the server runs as one node in memory`;
}

/**
 * The one-line message for an error thrown while `bayou start` built the server or began to
 * listen on `target`. Errors already written for the operator (options, config file) pass
 * as they are; anything else is named as an unexpected failure.
 */
export function startupFailure(err: unknown, target: ListenTarget): string {
  const listen = codeOf(err) === undefined ? null : listenFailure(codeOf(err) as string, target);
  if (listen !== null) return listen;
  if (err instanceof BayouEngineError) return redisFailure(err);
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof BayouConfigError) return message;
  return `could not start: ${message.split('\n')[0]} (--log-level debug prints the stack)`;
}
