/**
 * Bayeux wire errors, in the `code:args:message` form of Bayeux 1.0 §3.9 with CometD's
 * message strings. `args` is a comma-separated list, often empty (`402::session_unknown`).
 */

export const BayeuxErrors = {
  /** Unknown or expired clientId; the client must handshake again. */
  sessionUnknown: { code: 402, message: 'session_unknown' },
  /** The security policy refused the handshake. */
  handshakeDenied: { code: 403, message: 'handshake_denied' },
  /** The security policy refused a subscription; args name the channel. */
  subscribeDenied: { code: 403, message: 'subscribe_denied' },
  /** The security policy refused a publish; args name the channel. */
  publishDenied: { code: 403, message: 'publish_denied' },
  /** The session holds as many subscriptions as allowed; args give the limit. */
  subscriptionLimit: { code: 403, message: 'subscription_limit' },
  /** Too many sessions from one client address; args give the limit. */
  sessionLimit: { code: 403, message: 'session_limit' },
  /** Too many publishes (args: the channel) or handshakes (args: `handshake`) too fast. */
  rateLimited: { code: 429, message: 'rate_limited' },
  /** The message has no `channel`. */
  channelMissing: { code: 400, message: 'channel_missing' },
  /** The channel name breaks the grammar, or may not be used in this place. */
  channelInvalid: { code: 405, message: 'channel_invalid' },
  /** A subscribe or unsubscribe without `subscription`. */
  subscriptionMissing: { code: 400, message: 'subscription_missing' },
  /** A message that is not a JSON object, or a field of the wrong type; args name the field. */
  messageInvalid: { code: 400, message: 'message_invalid' },
  /** A `__proto__` key anywhere in the message. */
  forbiddenKey: { code: 400, message: 'forbidden_key' },
  /** A handshake whose `version` or `supportedConnectionTypes` the server cannot serve. */
  versionUnsupported: { code: 400, message: 'version_unsupported' },
  connectionTypeUnsupported: { code: 400, message: 'connection_type_unsupported' },
  /** A message larger than the server's limit; args give the limit in bytes. */
  messageTooLarge: { code: 413, message: 'message_too_large' },
  /** The server-side handler of a `/service` channel threw; args name the channel. */
  serviceFailed: { code: 500, message: 'service_failed' },
  /** No handler is registered for this `/service` channel. */
  serviceUnknown: { code: 404, message: 'service_unknown' },
  /** A server-side hook, extension or listener failed while handling the message. */
  internalError: { code: 500, message: 'internal_error' },
  /** The engine (the cluster's backend) could not take the message; nothing was delivered. */
  engineUnavailable: { code: 503, message: 'engine_unavailable' },
  /**
   * The node takes no new session now: it is draining (shutting down: args `draining`) or
   * past its handshake rate (args `handshake_rate`). The advice says when to try again.
   */
  nodeBusy: { code: 503, message: 'node_busy' },
  /** A proxy hook's backend did not answer in time; args name the hook (`connect`, `subscribe`, …). */
  backendTimeout: { code: 504, message: 'backend_timeout' },
  /** A proxy hook's backend failed: unreachable, a 5xx, or an answer that is not one; args name the hook. */
  backendFailed: { code: 502, message: 'backend_failed' },
} as const satisfies Record<string, { code: number; message: string }>;

export type BayeuxErrorName = keyof typeof BayeuxErrors;

/** Longest argument echoed in an error: a hostile channel name is not sent back whole. */
const MAX_ARG_LENGTH = 256;

function unsafe(code: number): boolean {
  return code < 32 || code === 58 /* : */ || code === 44 /* , */;
}

/**
 * One argument as it may appear in an error string: `:` and `,` (the separators) and
 * control characters become `_`, and it is cut at 256 characters, so an attacker-chosen
 * channel name cannot break the `code:args:message` form or bloat the reply.
 */
function safeArg(value: string | number): string {
  const text = String(value);
  const end = Math.min(text.length, MAX_ARG_LENGTH);
  let i = 0;
  while (i < end && !unsafe(text.charCodeAt(i))) i++;
  if (i === text.length) return text;
  let out = text.slice(0, i);
  for (; i < end; i++) out += unsafe(text.charCodeAt(i)) ? '_' : text[i];
  return out;
}

/** Formats an error string: `formatError('subscribeDenied', ['/a'])` → `403:/a:subscribe_denied`. */
export function formatError(name: BayeuxErrorName, args: readonly (string | number)[] = []): string {
  const e = BayeuxErrors[name];
  return `${e.code}:${args.map(safeArg).join(',')}:${e.message}`;
}

export interface ParsedError {
  code: number;
  args: string[];
  message: string;
}

/** Parses `code:args:message`; returns `null` for a string not in that form. */
export function parseError(error: unknown): ParsedError | null {
  if (typeof error !== 'string') return null;
  const first = error.indexOf(':');
  const last = error.lastIndexOf(':');
  if (first < 1 || last === first) return null;
  const code = Number(error.slice(0, first));
  if (!Number.isInteger(code)) return null;
  const argText = error.slice(first + 1, last);
  return { code, args: argText === '' ? [] : argText.split(','), message: error.slice(last + 1) };
}
