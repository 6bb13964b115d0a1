/**
 * The flags of `bayou start` for limits, queues and timeouts: options of the plugin
 * (`options.ts`) and of its `limits` (`limits/limiter.ts`), whose defaults they show.
 * Part of the one flag table (`FLAGS` in `flags.ts`).
 */
import { defaultLimits } from '../limits/limiter.js';
import { defaultOptions } from '../options.js';
import { type FlagSpec, nonNegative } from './flag-spec.js';

/** An integer flag setting option `key` (dotted for `limits.*`), its default read from the options. */
function intFlag(
  flag: string,
  key: string,
  value: string,
  help: string,
  fallback: number | string,
): FlagSpec {
  const env = `BAYOU_${flag.toUpperCase().replace(/-/g, '_')}`;
  return { flag, env: [env], key, kind: 'int', value, help, default: String(fallback), check: nonNegative };
}

export const LIMIT_FLAGS: readonly FlagSpec[] = [
  intFlag(
    'timeout',
    'timeout',
    '<ms>',
    'how long a /meta/connect is held when nothing is queued',
    defaultOptions.timeout,
  ),
  intFlag(
    'max-interval',
    'maxInterval',
    '<ms>',
    'how long a session lives after its last connect ended before it expires',
    defaultOptions.maxInterval,
  ),
  intFlag(
    'interval',
    'interval',
    '<ms>',
    'how long a client waits between a connect reply and its next connect (advice interval)',
    defaultOptions.interval,
  ),
  intFlag(
    'long-poll-delay',
    'longPollDelay',
    '<ms>',
    'how long a held long-poll with something to send waits for more while the event loop is saturated',
    defaultOptions.longPollDelay,
  ),
  intFlag(
    'sweep-interval',
    'sweepInterval',
    '<ms>',
    'period of the shared sweep that times out held connects and expires sessions (at least 10)',
    defaultOptions.sweepInterval,
  ),
  intFlag(
    'max-sessions-per-browser',
    'maxSessionsPerBrowser',
    '<n>',
    'long-polls one browser (BAYEUX_BROWSER cookie) may hold at once',
    defaultOptions.maxSessionsPerBrowser,
  ),
  intFlag(
    'multi-session-interval',
    'multiSessionInterval',
    '<ms>',
    'interval advised to a browser past --max-sessions-per-browser',
    defaultOptions.multiSessionInterval,
  ),
  intFlag(
    'handshake-timeout',
    'handshakeTimeout',
    '<ms>',
    'close a connection that sent nothing, or a WebSocket without a live Bayeux session, after this long (0 = never)',
    defaultOptions.handshakeTimeout,
  ),
  intFlag(
    'heartbeat-interval',
    'heartbeatInterval',
    '<ms>',
    'ping a WebSocket whose session negotiated the heartbeat (@bayou/client) this often; close it when nothing came back between two pings (0 = no heartbeat)',
    defaultOptions.heartbeatInterval,
  ),
  intFlag(
    'heartbeat-timeout',
    'heartbeatTimeout',
    '<ms>',
    "how long a heartbeat session's /meta/connect is held on its WebSocket (instead of --timeout)",
    defaultOptions.heartbeatTimeout,
  ),
  intFlag(
    'drain-spread',
    'drainSpread',
    '<ms>',
    'on SIGTERM, end the sessions spread over this window after /readyz turned 503 (0 = at once)',
    defaultOptions.drainSpread,
  ),
  intFlag(
    'max-handshake-rate',
    'maxHandshakeRate',
    '<n>',
    'handshakes this node admits a second; past it, retry advice with a jittered interval (0 = no limit)',
    defaultOptions.maxHandshakeRate,
  ),
  intFlag(
    'max-connections',
    'maxConnections',
    '<n>',
    'open connections this process accepts; past it a connection gets HTTP 503 and is closed (0 = no cap)',
    `${defaultOptions.maxConnections} (90% of ulimit -n here, else 10000)`,
  ),
  intFlag(
    'max-connections-per-ip',
    'maxConnectionsPerIp',
    '<n>',
    'open connections accepted from one peer address; past it a new one is closed at once (0 = no cap; behind a balancer the peer is the balancer)',
    defaultOptions.maxConnectionsPerIp,
  ),
  intFlag(
    'max-queued-messages',
    'maxQueuedMessages',
    '<n>',
    'messages queued for one session before it is dropped as a slow consumer',
    defaultOptions.maxQueuedMessages,
  ),
  intFlag(
    'max-queued-bytes',
    'maxQueuedBytes',
    '<n>',
    'characters of serialized messages queued for one session before it is dropped as a slow consumer',
    defaultOptions.maxQueuedBytes,
  ),
  intFlag(
    'max-buffered-bytes',
    'maxBufferedBytes',
    '<n>',
    'bytes buffered on one WebSocket before its session is dropped as a slow consumer',
    defaultOptions.maxBufferedBytes,
  ),
  intFlag(
    'max-batch-messages',
    'maxBatchMessages',
    '<n>',
    'most messages in one frame or request',
    defaultOptions.maxBatchMessages,
  ),
  intFlag(
    'max-subscriptions-per-session',
    'maxSubscriptionsPerSession',
    '<n>',
    'most subscriptions one session may hold',
    defaultOptions.maxSubscriptionsPerSession,
  ),
  intFlag(
    'max-sessions-per-ip',
    'limits.maxSessionsPerIp',
    '<n>',
    'sessions one client IP may hold (0 = no limit)',
    defaultLimits.maxSessionsPerIp,
  ),
  intFlag(
    'handshake-rate',
    'limits.handshakeRate',
    '<n>',
    'handshakes per second one client IP may sustain (0 = no limit)',
    defaultLimits.handshakeRate,
  ),
  intFlag(
    'handshake-burst',
    'limits.handshakeBurst',
    '<n>',
    'handshakes one client IP may send at once',
    defaultLimits.handshakeBurst,
  ),
  intFlag(
    'publish-rate',
    'limits.publishRate',
    '<n>',
    'publishes per second one session may sustain (0 = no limit)',
    defaultLimits.publishRate,
  ),
  intFlag(
    'publish-burst',
    'limits.publishBurst',
    '<n>',
    'publishes one session may send at once',
    defaultLimits.publishBurst,
  ),
];
