/**
 * Every option of bayou-loadtest in one table, with its default and help text. The CLI
 * parser, `--help` and `resolveOptions()` all read this table, so they cannot drift apart.
 */
import { LoadtestError, LoadtestErrors } from './errors.js';
import { type FlagDef, kebabFlag, readFlags } from './flag-reader.js';
import { CONNECTIONS_DEFAULTS, CONNECTIONS_SPECS, type ConnectionsOptions } from './idle.js';
import {
  checkLocalPorts,
  checkPrefix,
  headerMap,
  parseAddresses,
  parseDuration,
  parseExt,
  parseHeader,
  withToken,
} from './option-values.js';
import { checkPublishers, PUBLISHER_SPECS, type PublisherShape } from './publisher-shapes.js';

export type Scenario = 'chat' | 'feed' | 'connections';
export type Transport = 'websocket' | 'long-polling' | 'streaming' | 'eventsource';
/** `streaming`: Bayou's HTTP streaming; `eventsource`: Faye's EventSource transport (Bayou speaks it too). */
export const TRANSPORTS: readonly Transport[] = ['websocket', 'long-polling', 'streaming', 'eventsource'];
/** `lean`: raw sockets; `browser`: what a browser tab sends (streaming and eventsource). */
export type ClientKind = 'lean' | 'browser';
export const CLIENT_KINDS: readonly ClientKind[] = ['lean', 'browser'];
/** feed: where the updates come from. */
export type FeedSource = 'publisher' | 'demo';
export const FEED_SOURCES: readonly FeedSource[] = ['publisher', 'demo'];
/** The server's demo feed names symbols with three letters: at most 26³ of them. */
export const MAX_DEMO_SUBJECTS = 17_576;
export const SCENARIOS: readonly Scenario[] = ['chat', 'feed', 'connections'];

export interface LoadtestOptions extends ConnectionsOptions {
  /** Bayeux endpoint (http:// or ws://; the transport decides the scheme). */
  url: string;
  transport: Transport;
  /** `browser`: node:http, a cookie jar and Chrome's headers per client (streaming, eventsource). */
  client: ClientKind;
  /** Simulated clients (sessions). */
  clients: number;
  /** chat: rooms (channels /chat/0 … /chat/N-1). */
  rooms: number;
  roomsPerClient: number;
  batches: number;
  batchSize: number;
  /** Characters of padding in each message's data. */
  messageSize: number;
  /** ms between batches. */
  pause: number;
  /** chat/feed: open-loop publish rate in messages per second (0 = batches / closed loop). */
  rate: number;
  /** chat: closed loop, keep at most this many deliveries outstanding (0 = off). */
  maxOutstanding: number;
  /** chat: who publishes (`publisher-shapes.ts`); `apiKey` for `api`. */
  publishers: PublisherShape;
  apiKey: string;
  /**
   * feed: `publisher` = the driver publishes the updates itself on /feed/<n> (any Bayeux
   * server); `demo` = a Bayou server's built-in demo feed produces them on
   * /demo/prices/<SYMBOL> (`bayou start --demo-feed`) and the driver publishes nothing.
   */
  source: FeedSource;
  /** feed: subjects (publisher: channels /feed/0 … /feed/N-1; demo: the first N demo symbols). */
  subjects: number;
  subjectsPerClient: number;
  /** ms to publish for; 0 = chat runs its batches. */
  duration: number;
  /** ms at the start whose deliveries are not measured. */
  warmup: number;
  /** ms to wait for outstanding deliveries after publishing stops. */
  drain: number;
  /** ms; abort and fail past it (0 = off). */
  maxLatency: number;
  /** Source addresses to spread connections over (empty = system default). */
  localAddresses: string[];
  /** websocket/lean: client i's source port is this + floor(i / addresses) (0 = the kernel picks). */
  localPortBase: number;
  workers: number;
  /** Handshakes in flight at once during setup. */
  concurrency: number;
  seed: number;
  /** URL of the server's Prometheus /metrics ('' = derived from --url, 'off' = never). */
  metricsUrl: string;
  /**
   * pid of a server on this machine (0 = none): its memory and CPU are read from /proc,
   * summed over it and its child processes (`bayou start --workers N`), instead of /metrics.
   */
  serverPid: number;
  json: string;
  html: string;
  /** Print the live progress line. */
  progress: boolean;
  /** Extra HTTP headers, each `name:value`, on every WebSocket upgrade and HTTP request (long-polling, streams). */
  headers: string[];
  /** Merged into every handshake's `ext`, e.g. `{ "token": "…" }` for a server that authenticates. */
  handshakeExt: Record<string, unknown> | null;
  /** A JWT sent as `ext.auth.token` with every handshake (merged into `handshakeExt`). */
  token: string;
  /** Put before the scenario's channels: `/lt` makes them `/lt/chat/<n>`, `/lt/feed/<n>`, `/lt/loadtest/idle`. */
  channelPrefix: string;
  /** WebSocket clients offer `permessage-deflate` (as browsers do). */
  compression: boolean;
  /** Every handshake asks for Bayou's idle heartbeat (`ext.bayou.heartbeat`), as `@bayou/client` does. */
  heartbeat: boolean;
}

type Kind = 'int' | 'ms' | 'string' | 'choice' | 'addresses' | 'bool' | 'header' | 'json' | 'prefix';
export interface OptionSpec {
  key: keyof LoadtestOptions;
  kind: Kind;
  help: string;
  scenarios?: readonly Scenario[];
  /** The flag when it is not the key in kebab case (`headers` → `--header`). */
  flag?: string;
  /** kind 'choice': the values it takes. */
  choices?: readonly string[];
}

export const DEFAULTS: Readonly<LoadtestOptions> = Object.freeze({
  url: 'http://127.0.0.1:8080/bayeux',
  transport: 'websocket',
  client: 'lean',
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  batches: 1000,
  batchSize: 10,
  messageSize: 50,
  pause: 10,
  rate: 0,
  maxOutstanding: 0,
  publishers: 'clients',
  apiKey: '',
  source: 'publisher',
  subjects: 100,
  subjectsPerClient: 10,
  ...CONNECTIONS_DEFAULTS,
  duration: 0,
  warmup: 0,
  drain: 5000,
  maxLatency: 0,
  localAddresses: [],
  localPortBase: 0,
  workers: 1,
  concurrency: 200,
  seed: 1,
  metricsUrl: '',
  serverPid: 0,
  json: '',
  html: '',
  progress: true,
  headers: [],
  handshakeExt: null,
  token: '',
  channelPrefix: '',
  compression: false,
  heartbeat: true,
});

export const OPTION_SPECS: readonly OptionSpec[] = [
  { key: 'url', kind: 'string', help: 'Bayeux endpoint of the server under test' },
  { key: 'transport', kind: 'choice', choices: TRANSPORTS, help: TRANSPORTS.join(' | ') },
  {
    key: 'client',
    kind: 'choice',
    choices: CLIENT_KINDS,
    help: 'lean (raw sockets) | browser (node:http, cookie jar, Chrome headers; streaming and eventsource)',
  },
  { key: 'clients', kind: 'int', help: 'simulated clients (sessions)' },
  { key: 'rooms', kind: 'int', help: 'chat rooms, channels /chat/<n>', scenarios: ['chat'] },
  { key: 'roomsPerClient', kind: 'int', help: 'random rooms each client joins', scenarios: ['chat'] },
  { key: 'batches', kind: 'int', help: 'batches to publish (when --duration is 0)', scenarios: ['chat'] },
  { key: 'batchSize', kind: 'int', help: 'messages per batch', scenarios: ['chat'] },
  {
    key: 'messageSize',
    kind: 'int',
    help: 'characters of text in each message',
    scenarios: ['chat', 'feed'],
  },
  { key: 'pause', kind: 'ms', help: 'pause between batches', scenarios: ['chat'] },
  {
    key: 'rate',
    kind: 'int',
    help:
      "open loop: messages/s (chat: total; feed: per subject, 0 = 10; feed --source demo: the server's " +
      '--demo-rate, only for the nominal figure, 0 = not given)',
    scenarios: ['chat', 'feed'],
  },
  {
    key: 'maxOutstanding',
    kind: 'int',
    help: 'closed loop: publish while fewer deliveries are outstanding (0 = off)',
    scenarios: ['chat'],
  },
  ...PUBLISHER_SPECS,
  {
    key: 'source',
    kind: 'choice',
    choices: FEED_SOURCES,
    help:
      'publisher: the driver publishes on /feed/<n> (any Bayeux server); demo: a Bayou server started ' +
      'with --demo-feed produces /demo/prices/<SYMBOL> records and nothing is published',
    scenarios: ['feed'],
  },
  {
    key: 'subjects',
    kind: 'int',
    help: "feed subjects: channels /feed/<n>, or with --source demo the symbols AAA, AAB, … (≤ the server's --demo-symbols)",
    scenarios: ['feed'],
  },
  { key: 'subjectsPerClient', kind: 'int', help: 'random subjects each client watches', scenarios: ['feed'] },
  ...CONNECTIONS_SPECS,
  {
    key: 'duration',
    kind: 'ms',
    help: 'publish (feed --source demo: measure) for this long after --warmup (chat: instead of --batches; feed: 10s if 0)',
  },
  { key: 'warmup', kind: 'ms', help: 'initial period left out of throughput and latency' },
  {
    key: 'drain',
    kind: 'ms',
    help: 'wait this long for late deliveries (feed --source demo: snapshots) before counting losses',
  },
  { key: 'maxLatency', kind: 'ms', help: 'abort and fail when a latency exceeds this (0 = off)' },
  { key: 'localAddresses', kind: 'addresses', help: 'source addresses, e.g. 127.0.0.2-127.0.0.9' },
  { key: 'localPortBase', kind: 'int', help: 'websocket: client i binds port this + i / addresses' },
  { key: 'workers', kind: 'int', help: 'worker processes sharing the clients (each holds its own sockets)' },
  { key: 'concurrency', kind: 'int', help: 'handshakes in flight at once during setup' },
  { key: 'seed', kind: 'int', help: 'seed of the random room/subject choice' },
  { key: 'metricsUrl', kind: 'string', help: "server /metrics URL ('' = from --url, 'off' = none)" },
  {
    key: 'serverPid',
    kind: 'int',
    help: 'pid of a local server: its memory and CPU summed over it and its workers from /proc (0 = /metrics only)',
  },
  { key: 'json', kind: 'string', help: 'write the result as JSON to this file' },
  { key: 'html', kind: 'string', help: 'write a self-contained HTML report with charts' },
  { key: 'progress', kind: 'bool', help: 'live progress line (--no-progress to hide)' },
  { key: 'compression', kind: 'bool', help: 'WebSocket clients offer permessage-deflate, as browsers do' },
  {
    key: 'heartbeat',
    kind: 'bool',
    help: "handshakes ask for Bayou's idle heartbeat, as @bayou/client does (--no-heartbeat: the plain held-connect cycle)",
  },
  {
    key: 'headers',
    kind: 'header',
    flag: 'header',
    help: 'name:value, an HTTP header on every WebSocket upgrade and HTTP request (long-polling, streams) (repeatable)',
  },
  {
    key: 'handshakeExt',
    kind: 'json',
    help: 'a JSON object merged into every handshake\'s ext, e.g. \'{"auth":{"token":"<jwt>"}}\'',
  },
  {
    key: 'token',
    kind: 'string',
    help: 'a JWT sent as ext.auth.token with every handshake (bayou start --jwt-secret)',
  },
  {
    key: 'channelPrefix',
    kind: 'prefix',
    help: 'prefix of the channels, e.g. /lt: /lt/chat/<n>, /lt/feed/<n>, /lt/loadtest/idle (not with --source demo)',
  },
];

/** The options as reports show them: header values and handshake ext values hidden (they may be credentials). */
export function redactOptions(o: Readonly<LoadtestOptions>): LoadtestOptions {
  return {
    ...o,
    headers: o.headers.map((h) => `${h.slice(0, h.indexOf(':'))}:<hidden>`),
    apiKey: o.apiKey === '' ? '' : '<hidden>',
    handshakeExt:
      o.handshakeExt === null
        ? null
        : Object.fromEntries(Object.keys(o.handshakeExt).map((k) => [k, '<hidden>'])),
    token: o.token === '' ? '' : '<hidden>',
  };
}

/** camelCase key → --kebab-case flag (without the dashes); a spec may name its flag itself. */
export function flagName(key: string): string {
  const spec = OPTION_SPECS.find((s) => s.key === key);
  return spec?.flag ?? kebabFlag(key);
}

function convert(spec: OptionSpec, raw: string): LoadtestOptions[keyof LoadtestOptions] {
  const name = flagName(spec.key);
  switch (spec.kind) {
    case 'int': {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) {
        throw new LoadtestError(
          LoadtestErrors.INVALID_OPTION,
          `--${name} needs a whole number ≥ 0, got ${raw}`,
        );
      }
      return n;
    }
    case 'ms':
      return parseDuration(raw);
    case 'choice':
      if (!spec.choices!.includes(raw)) {
        throw new LoadtestError(
          LoadtestErrors.INVALID_OPTION,
          `--${name} is ${spec.choices!.slice(0, -1).join(', ')} or ${spec.choices!.at(-1)}; got ${raw}`,
        );
      }
      return raw;
    case 'addresses':
      return parseAddresses(raw);
    case 'bool':
      return raw !== 'false';
    case 'header':
      return [parseHeader(raw).join(':')];
    case 'json':
      return parseExt(raw);
    case 'prefix':
      return checkPrefix(raw);
    default:
      return raw;
  }
}

/** Merges defaults, rejects unknown keys and impossible values, returns a frozen object. */
export function resolveOptions(partial: Partial<LoadtestOptions> = {}): Readonly<LoadtestOptions> {
  for (const key of Object.keys(partial)) {
    if (!(key in DEFAULTS)) throw new LoadtestError(LoadtestErrors.UNKNOWN_OPTION, `unknown option ${key}`);
  }
  const o = { ...DEFAULTS, ...partial };
  if (o.clients < 1) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'clients must be ≥ 1');
  if (!TRANSPORTS.includes(o.transport)) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, `transport is ${TRANSPORTS.join(', ')}`);
  }
  if (o.client === 'browser' && o.transport !== 'streaming' && o.transport !== 'eventsource')
    throw invalid('--client browser speaks streaming and eventsource: add --transport streaming');
  if (o.roomsPerClient > o.rooms) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'rooms-per-client cannot exceed rooms');
  }
  if (o.subjectsPerClient > o.subjects) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'subjects-per-client cannot exceed subjects');
  }
  checkPublishers(o);
  if (!FEED_SOURCES.includes(o.source)) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'source is publisher or demo');
  }
  if (o.source === 'demo' && o.subjects > MAX_DEMO_SUBJECTS)
    throw invalid(`with --source demo, subjects cannot exceed ${MAX_DEMO_SUBJECTS} (three-letter symbols)`);
  if (o.workers < 1) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'workers must be ≥ 1');
  checkLocalPorts(o.localPortBase, o.clients, o.localAddresses.length);
  if (!Array.isArray(o.headers)) throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'headers is a list');
  headerMap(o.headers);
  if (o.handshakeExt !== null && (typeof o.handshakeExt !== 'object' || Array.isArray(o.handshakeExt))) {
    throw new LoadtestError(LoadtestErrors.INVALID_OPTION, 'handshakeExt must be an object or null');
  }
  if (o.token !== '') o.handshakeExt = withToken(o.handshakeExt, o.token);
  checkPrefix(o.channelPrefix);
  if (o.channelPrefix !== '' && o.source === 'demo')
    throw invalid(
      "--channel-prefix does not apply to --source demo: the server's subjects are /demo/prices/<SYMBOL>",
    );
  return Object.freeze(o);
}

const invalid = (message: string) => new LoadtestError(LoadtestErrors.INVALID_OPTION, message);

export interface ParsedArgs {
  scenario: Scenario | undefined;
  options: Partial<LoadtestOptions>;
  help: boolean;
}

/** Every option as the flag reader knows it. */
const FLAG_DEFS: readonly FlagDef<keyof LoadtestOptions>[] = OPTION_SPECS.map((spec) => ({
  key: spec.key,
  flag: flagName(spec.key),
  isSwitch: spec.kind === 'bool',
}));

/** Parses `<scenario> [--flag value | --flag=value | --no-flag]…`. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const options: Record<string, unknown> = {};
  let scenario: Scenario | undefined;
  const { tokens, help } = readFlags(argv, FLAG_DEFS);
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (scenario !== undefined || !SCENARIOS.includes(token.value as Scenario)) {
        throw new LoadtestError(
          LoadtestErrors.UNKNOWN_SCENARIO,
          `unknown scenario ${token.value} (chat|feed|connections|chaos)`,
        );
      }
      scenario = token.value as Scenario;
      continue;
    }
    const spec = OPTION_SPECS.find((s) => s.key === token.def.key)!;
    const value = convert(spec, token.raw);
    // Repeatable options (--header) add up.
    options[spec.key] =
      spec.kind === 'header'
        ? [...((options[spec.key] as string[] | undefined) ?? []), ...(value as string[])]
        : value;
  }
  return { scenario, options: options as Partial<LoadtestOptions>, help };
}
