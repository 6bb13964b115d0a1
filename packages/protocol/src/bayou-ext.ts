/**
 * Bayou's additions to Bayeux, named once for the server, the client, the load tester and
 * the examples. Each is negotiated in the handshake `ext` and changes nothing for a plain
 * Bayeux client.
 */

/** Handshake `ext` key of Bayou's own options: `ext.bayou = { records?: true, compact?: true }`. */
export const BAYOU_EXT = 'bayou';
/** `ext.bayou.records`: the client understands record snapshots and deltas (`ext.r`). */
export const EXT_RECORDS = 'records';
/** `ext.bayou.compact`: the client takes compact record encoding on `COMPACT_RECORD_CHANNEL`. */
export const EXT_COMPACT = 'compact';
/**
 * `ext.bayou.heartbeat`: the cheap idle heartbeat of a WebSocket session. A handshake with
 * `ext.bayou.heartbeat: true` asks for it; a server that grants it answers
 * `ext.bayou.heartbeat: <ms>` (its ping interval). While such a session is carried by a
 * WebSocket, the server sends every `<ms>` a protocol-level ping (RFC 6455 §5.5.2, answered
 * by the browser or `ws` without the client's code) followed by an empty Bayeux array `[]`
 * (a frame the client's code sees, so it can tell a silent link), and holds its
 * `/meta/connect` much longer than `timeout` (the connect replies advise how long). A socket
 * that sends nothing back between two pings is closed. A client that does not ask, or a
 * server that does not answer, keeps the plain held-connect cycle.
 */
export const EXT_HEARTBEAT = 'heartbeat';
/** Subscribe `ext` key holding record options: `ext.record = { fields?, maxFrequency? }`. */
export const EXT_RECORD_REQUEST = 'record';
/** Message `ext` key telling a snapshot (`'s'`) from a delta (`'d'`) for tagged record subscribers. */
export const EXT_RECORD_KIND = 'r';
/** The channel compact record messages arrive on. */
export const COMPACT_RECORD_CHANNEL = '/~r';

/** CometD's acknowledgement extension: handshake `ext.ack: true`, connect `ext.ack: <batch>`. */
export const EXT_ACK = 'ack';
/**
 * Acknowledged delivery in numbered WebSocket frames (Bayou only; CometD's ack as it is
 * otherwise). Handshake `ext.ack: true` with `ext.bayou.ackFrames: true`; the server agrees
 * with `ext.ack.frames: true`. Its deliveries over a WebSocket then leave at once, each
 * frame ending with `{"channel":"/meta/ack","ext":{"ack":<batch>}}`; a connect's
 * `ext.ackFrames: <batch>` says every frame up to it arrived (nothing is resent), and a
 * connect's `ext.ack: <batch>` (after a reconnect) asks for every later batch again.
 * Over long-polling the session acknowledges connect replies as CometD's does.
 */
export const EXT_ACK_FRAMES = 'ackFrames';
/** The last message of each numbered frame: `ext.ack` is the frame's batch number. */
export const ACK_MARKER_CHANNEL = '/meta/ack';
/** The replay extension: handshake `ext.replay: true`; positions and recovery under `ext.replay`. */
export const EXT_REPLAY = 'replay';
/**
 * A gap told after the fact (replay extension, Bayou only): a node's connection to its
 * engine was silent or lost and what it missed could not come from history. A session that
 * negotiated replay gets `{"channel":"/meta/gap","ext":{"replay":{"<subscription>":{"recovered":false}}}}`,
 * in order among its deliveries (after what was recovered, before what came later), for
 * each of its subscriptions (channels and wildcard patterns) that may have lost messages.
 */
export const GAP_CHANNEL = '/meta/gap';
/**
 * Deltas on a plain channel (Bayou only): a subscribe with `ext.delta: DELTA_FORMAT` asks
 * for them and a reply with the same `ext.delta` grants them. Every message then delivered
 * on that channel names itself, `ext.delta.id` (`"<epoch>:<offset>"`, its place in the
 * channel's history); a delta also names its base, `ext.delta.from`, and its `data` is a
 * JSON Merge Patch (RFC 7386) to apply to the data of that base. A client whose last
 * message on the channel is not the base must not apply it (it subscribes again: the next
 * message comes whole).
 */
export const EXT_DELTA = 'delta';
/** The one delta format: JSON Merge Patch of `data` against the base's `data`. */
export const DELTA_FORMAT = 'merge-patch';
/**
 * Publish `ext` key carrying a W3C Trace Context `traceparent`
 * (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`): a server with tracing on
 * continues that trace through its engine to the delivery. The same name is the HTTP header
 * of `POST /api/publish`. A value that is not a valid `traceparent` is ignored, as the W3C
 * recommendation asks (the message is published untraced).
 */
export const EXT_TRACEPARENT = 'traceparent';

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Whether `value` is a version-00 W3C `traceparent` with a non-zero trace id and parent id. */
export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && value.length === 55 && TRACEPARENT.test(value);
}

/** Handshake `ext` key of a connection token: `ext.auth = { token }`. */
export const EXT_AUTH = 'auth';

/**
 * The long-polling browser cookie (CometD's name): one id per browser, set by the server on
 * the handshake reply and sent back with every long-poll, so the server can bound the
 * long-polls one browser holds and tie a session to the browser that made it.
 */
export const BROWSER_COOKIE = 'BAYEUX_BROWSER';

/**
 * Presence (Bayou only): a server that keeps presence in a channel announces joins and
 * leaves on `/presence<channel>` (`/presence/chat/room1` for `/chat/room1`) and answers
 * `PRESENCE_SERVICE` with the members.
 */
export const PRESENCE_PREFIX = '/presence/';
/** The service channel answering `{ channel }` with `{ members }`. */
export const PRESENCE_SERVICE = '/service/presence';
/** The channel presence events of `channel` go to. */
export function presenceChannel(channel: string): string {
  return `${PRESENCE_PREFIX.slice(0, -1)}${channel}`;
}

/** A message's place in its channel's history. Offsets compare only within one epoch. */
export interface StreamPosition {
  readonly offset: number;
  readonly epoch: string;
}

/** The prefix of the demo price feed's record subjects: `/demo/prices/<SYMBOL>`. */
export const DEMO_PRICES_PREFIX = '/demo/prices/';
/**
 * The demo price feed's record subjects as a channel pattern: `DEMO_PRICES_PREFIX` and `*`,
 * written out so that a bundle using none of it drops it (a template is kept as a possible
 * side effect).
 */
export const DEMO_PRICES_PATTERN = '/demo/prices/*';
/** How many demo symbols can exist: three letters, `AAA` to `ZZZ`. */
export const DEMO_SYMBOL_COUNT = 17_576;
/** `AAA`, `AAB`, … in order: the demo symbol of index `i` (0-based). */
export function demoSymbol(i: number): string {
  const a = String.fromCharCode(65 + (Math.floor(i / 676) % 26));
  const b = String.fromCharCode(65 + (Math.floor(i / 26) % 26));
  return a + b + String.fromCharCode(65 + (i % 26));
}
export function demoSubject(symbol: string): string {
  return `${DEMO_PRICES_PREFIX}${symbol}`;
}

/** Defaults every side must agree on. */
export const DEFAULTS = Object.freeze({
  /** Endpoint path of both transports. */
  path: '/bayeux',
  /** ms a `/meta/connect` is held by the server. */
  timeout: 30_000,
  /** ms a session without a connect lives on. */
  maxInterval: 10_000,
  /** Largest frame or body, bytes (64 KiB; a literal, so a bundle that reads none of these drops them). */
  maxPayloadBytes: 65_536,
  /** Most messages in one frame or request. */
  maxBatchMessages: 1_000,
});
