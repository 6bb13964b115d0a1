/**
 * `bayou-loadtest chaos`: the chaos chat from the command line, against a server (`--url`)
 * or against a cluster the run starts (`--cluster N`). Flags with their defaults in one
 * table; prints a report and exits 1 when anything was lost or duplicated.
 */
import { writeFileSync } from 'node:fs';
import { LoadtestError, LoadtestErrors } from '../errors.js';
import { readFlags } from '../flag-reader.js';
import { type ChaosOptions, type ChaosResult, runChaos } from './chaos-run.js';
import { CHAOS_TRANSPORTS } from './client-transports.js';
import { BALANCER_FLAG, checkBalancer } from './cluster-balancer.js';
import {
  type ClusterChaosOptions,
  type ClusterChaosResult,
  clusterChaosPassed,
  runClusterChaos,
} from './cluster-chaos.js';
import { formatClusterChaos, renderClusterHtml } from './cluster-report.js';
import { assertReachable, exitOnSignal } from './reach.js';
import { STORM_FLAGS } from './storm.js';

type Mode = 'both' | 'connections' | 'cluster';

interface Flag {
  key: keyof ChaosOptions | keyof ClusterChaosOptions | 'json' | 'html';
  flag: string;
  help: string;
  default: string;
  /** The default under `--cluster` when it differs. */
  clusterDefault?: string;
  kind: 'string' | 'number' | 'ms';
  /** Which runs read it: the connection chaos against --url, the cluster run, or both. */
  mode: Mode;
}

const FLAGS: readonly Flag[] = [
  {
    key: 'nodes',
    flag: 'cluster',
    kind: 'number',
    default: '0',
    mode: 'both',
    help: 'start a cluster of N `bayou start --redis` nodes, a redis-server and a round-robin balancer, all on loopback, and run against it (0: run against --url)',
  },
  BALANCER_FLAG,
  {
    key: 'target',
    flag: 'target',
    kind: 'string',
    default: '',
    mode: 'cluster',
    help: "a running cluster's Bayeux endpoint (its balancer) to run the cluster scenario against instead of starting one; the run restarts nothing, you do",
  },
  {
    key: 'apiKey',
    flag: 'api-key',
    kind: 'string',
    default: '',
    mode: 'cluster',
    help: "with --target: the key of the servers' POST /api/publish (--api-key of bayou start)",
  },
  {
    key: 'url',
    flag: 'url',
    kind: 'string',
    default: 'http://127.0.0.1:8080/bayeux',
    mode: 'connections',
    help: 'Bayeux endpoint',
  },
  {
    key: 'transport',
    flag: 'transport',
    kind: 'string',
    default: 'websocket',
    clusterDefault: 'mixed',
    mode: 'both',
    help: 'websocket, long-polling or streaming (the client limited to it); with --cluster also mixed (half WebSocket, half long-polling only)',
  },
  {
    key: 'clients',
    flag: 'clients',
    kind: 'number',
    default: '1000',
    mode: 'both',
    help: 'clients (real @bayou/client instances)',
  },
  {
    key: 'rooms',
    flag: 'rooms',
    kind: 'number',
    default: '100',
    clusterDefault: '10',
    mode: 'both',
    help: 'rooms',
  },
  {
    key: 'roomsPerClient',
    flag: 'rooms-per-client',
    kind: 'number',
    default: '10',
    clusterDefault: '1',
    mode: 'both',
    help: 'rooms each client joins',
  },
  {
    key: 'rate',
    flag: 'rate',
    kind: 'number',
    default: '100',
    clusterDefault: '20',
    mode: 'both',
    help: 'messages per second the publisher sends, in all (round-robin over the rooms)',
  },
  {
    key: 'duration',
    flag: 'duration',
    kind: 'ms',
    default: '60s',
    mode: 'both',
    help: 'how long the publisher runs',
  },
  {
    key: 'killEvery',
    flag: 'kill-every',
    kind: 'ms',
    default: '30s',
    mode: 'cluster',
    help: "time between two node restarts, the nodes in turn; none in the stream's last 10 s (0: none)",
  },
  {
    key: 'restart',
    flag: 'restart',
    kind: 'string',
    default: 'kill',
    mode: 'cluster',
    help: 'kill: SIGKILL the node and start it again; rolling: SIGTERM it, wait until it is back, then the next',
  },
  ...STORM_FLAGS,
  {
    key: 'redisRestartAt',
    flag: 'redis-restart-at',
    kind: 'ms',
    default: '0',
    mode: 'cluster',
    help: 'restart Redis once (SIGTERM; it saves and reloads its data) this long into the stream (0: never)',
  },
  {
    key: 'workers',
    flag: 'workers',
    kind: 'number',
    default: '4',
    mode: 'cluster',
    help: 'worker processes sharing the clients',
  },
  {
    key: 'logDir',
    flag: 'logs',
    kind: 'string',
    default: '',
    mode: 'cluster',
    help: "directory that receives each node's output (node0.log, …; with --log-level warn)",
  },
  {
    key: 'chaosInterval',
    flag: 'chaos',
    kind: 'ms',
    default: '3s',
    mode: 'connections',
    help: 'mean time between connection kills (0: none)',
  },
  {
    key: 'outageFraction',
    flag: 'outage-fraction',
    kind: 'number',
    default: '0.2',
    mode: 'connections',
    help: 'fraction of kills that keep the client down for --outage',
  },
  {
    key: 'outageMs',
    flag: 'outage',
    kind: 'ms',
    default: '15s',
    mode: 'connections',
    help: "how long a held-down client stays away (longer than the server's maxInterval)",
  },
  {
    key: 'drainMs',
    flag: 'drain',
    kind: 'ms',
    default: '30s',
    mode: 'both',
    help: 'longest wait for stragglers after the last publish',
  },
  {
    key: 'seed',
    flag: 'seed',
    kind: 'number',
    default: '1',
    mode: 'both',
    help: 'room assignment and chaos seed',
  },
  {
    key: 'prefix',
    flag: 'channel-prefix',
    kind: 'string',
    default: '/chaos/',
    mode: 'both',
    help: 'channel prefix of the rooms',
  },
  {
    key: 'json',
    flag: 'json',
    kind: 'string',
    default: '',
    mode: 'both',
    help: 'also write the result as JSON to this file',
  },
  {
    key: 'html',
    flag: 'html',
    kind: 'string',
    default: '',
    mode: 'cluster',
    help: 'write a self-contained HTML report (charts, restarts) to this file',
  },
];

const usageLine = (f: Flag) => {
  const arg = `--${f.flag} <${f.kind === 'ms' ? 'time' : f.kind === 'number' ? 'n' : 'value'}>`;
  const cluster = f.clusterDefault === undefined ? '' : `; with --cluster ${f.clusterDefault}`;
  const only = f.mode === 'both' ? '' : f.mode === 'cluster' ? ' [--cluster only]' : ' [without --cluster]';
  return `  ${arg.padEnd(28)}${f.help} (default ${f.default || 'none'}${cluster})${only}`;
};

export const CHAOS_USAGE = `Usage: bayou-loadtest chaos [options]

Runs the chaos chat: real @bayou/client instances (acknowledgements and recovery on, as
they ship) in rooms, one publisher numbering each room's messages, and counts every lost
and duplicated message; exits 1 if there is any.

Without --cluster, against --url: connections are killed at random and some clients are
held down past the server's maxInterval.
With --cluster N: the run starts a redis-server, N \`bayou start --redis\` nodes and a
round-robin balancer with no affinity (--balancer; all on loopback, all stopped by pid at the end),
publishes through POST /api/publish, restarts a node every --kill-every and Redis once at
--redis-restart-at, and reports how long each client of a dead node took to receive again.

${FLAGS.map(usageLine).join('\n')}

Times take ms, s or m: 500ms, 3s, 10m.
Example: bayou-loadtest chaos --cluster 3 --kill-every 30s --redis-restart-at 5m --duration 10m --clients 1000 --html chaos.html`;

function duration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (m === null) throw new Error(`--${flag}: "${text}" is not a time; write e.g. 500ms, 3s or 10m`);
  const n = Number(m[1]);
  return m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
}

export type ParsedChaos = { json: string; html: string } & (
  | { mode: 'connections'; options: ChaosOptions }
  | { mode: 'cluster'; options: ClusterChaosOptions }
);

/** The flags given, by name, read by the package's one flag reader (every chaos flag takes a value). */
function readArgs(argv: readonly string[]): Map<string, string> {
  const defs = FLAGS.map((f) => ({ key: f.flag, flag: f.flag, isSwitch: false }));
  const given = new Map<string, string>();
  for (const token of readFlags(argv, defs).tokens) {
    if (token.kind === 'positional')
      throw new LoadtestError(LoadtestErrors.UNKNOWN_OPTION, `unknown option ${token.value}`);
    given.set(token.def.flag, token.raw);
  }
  return given;
}

function convert(f: Flag, raw: string): string | number {
  if (f.kind === 'string') return raw;
  if (f.kind === 'ms') return duration(raw, f.flag);
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${f.flag}: "${raw}" must be a non-negative number`);
  return n;
}

/** `--target`: a cluster the run did not start, so it starts and restarts nothing. */
function targetChecks(given: ReadonlyMap<string, string>, options: Record<string, unknown>): void {
  const own = [
    'cluster',
    'balancer',
    'kill-every',
    'restart',
    'redis-restart-at',
    'logs',
    'storm',
    'storm-at',
  ].filter((f) => given.has(f));
  if (own.length > 0)
    throw new Error(
      `--target runs against a cluster you run: ${own.map((f) => `--${f}`).join(', ')} cannot apply`,
    );
  if (!/^https?:\/\//.test(options.target as string))
    throw new Error(`--target must be an http(s) Bayeux endpoint, got "${String(options.target)}"`);
  if (options.apiKey === '')
    throw new Error("--target needs --api-key: the key of the servers' /api/publish");
  options.nodes = 0;
  options.killEvery = 0;
  options.redisRestartAt = 0;
}

export function parseChaosArgs(argv: readonly string[]): ParsedChaos {
  const given = readArgs(argv);
  const cluster = Number(given.get('cluster') ?? 0) > 0 || given.has('target');
  const options: Record<string, unknown> = {};
  for (const f of FLAGS) {
    const raw = given.get(f.flag);
    if (raw !== undefined && f.mode !== 'both' && (f.mode === 'cluster') !== cluster)
      throw new Error(
        f.mode === 'cluster'
          ? `--${f.flag} applies to a cluster run: add --cluster 3`
          : `--${f.flag} does not apply with --cluster (the run starts and kills the nodes itself)`,
      );
    const value = raw ?? (cluster ? (f.clusterDefault ?? f.default) : f.default);
    options[f.key] = convert(f, value);
  }
  const transports: readonly string[] = cluster ? [...CHAOS_TRANSPORTS, 'mixed'] : CHAOS_TRANSPORTS;
  if (!transports.includes(options.transport as string))
    throw new Error(
      `--transport must be ${transports.slice(0, -1).join(', ')} or ${transports.at(-1)}, got "${String(options.transport)}"`,
    );
  if (cluster && options.restart !== 'kill' && options.restart !== 'rolling')
    throw new Error(`--restart must be kill or rolling, got "${String(options.restart)}"`);
  if (cluster) checkBalancer(options.balancer, false);
  if (cluster && !['none', 'kill', 'drain'].includes(options.storm as string))
    throw new Error(`--storm must be none, kill or drain, got "${String(options.storm)}"`);
  if (given.has('target')) targetChecks(given, options);
  else if (cluster && ((options.nodes as number) < 2 || !Number.isInteger(options.nodes)))
    throw new Error('--cluster needs a whole number of nodes, at least 2');
  const { json, html, nodes, ...rest } = options;
  if (cluster) {
    const { url: _u, chaosInterval: _c, outageFraction: _f, outageMs: _o, ...own } = rest;
    return {
      mode: 'cluster',
      options: { nodes, ...own } as unknown as ClusterChaosOptions,
      json: json as string,
      html: html as string,
    };
  }
  const {
    killEvery: _k,
    restart: _r,
    redisRestartAt: _a,
    storm: _s,
    stormAt: _sa,
    probePercent: _pp,
    workers: _w,
    logDir: _l,
    target: _t,
    apiKey: _p,
    balancer: _b,
    ...own
  } = rest;
  return { mode: 'connections', options: own as unknown as ChaosOptions, json: json as string, html: '' };
}

export function formatChaos(options: ChaosOptions, r: ChaosResult): string {
  const verdict = r.lost === 0 && r.duplicated === 0 && r.stranded === 0 ? 'PASS' : 'FAIL';
  return [
    `chaos chat over ${options.transport}: ${options.clients} clients, ${options.rooms} rooms, ${options.roomsPerClient} each, ${options.rate} msg/s for ${options.duration / 1000} s`,
    `  kills ${r.kills} (every ${options.chaosInterval / 1000} s on average), of them held down ${options.outageMs / 1000} s: ${r.outages}`,
    `  published ${r.published}; deliveries expected ${r.expected}, delivered ${r.delivered}`,
    `  lost ${r.lost}, duplicated ${r.duplicated}, gap events ${r.gaps}, clients not reconnected ${r.stranded}`,
    `  clients by transport at the end: ${Object.entries(r.onTransport)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ')}`,
    `  ${r.seconds.toFixed(1)} s in all — ${verdict}`,
  ].join('\n');
}

export async function chaosMain(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${CHAOS_USAGE}\n`);
    return 0;
  }
  let parsed: ParsedChaos;
  try {
    parsed = parseChaosArgs(argv);
    // The clients would retry an unreachable --url for ever: refuse it up front instead.
    if (parsed.mode === 'connections') await assertReachable(parsed.options.url);
    else checkBalancer(parsed.options.balancer, true);
  } catch (err) {
    process.stderr.write(
      `bayou-loadtest chaos: ${(err as Error).message} (see bayou-loadtest chaos --help)\n`,
    );
    return 2;
  }
  if (parsed.mode === 'cluster') return clusterMain(parsed.options, parsed.json, parsed.html);
  const result = await runChaos(parsed.options).finally(exitOnSignal('bayou-loadtest chaos'));
  process.stdout.write(`${formatChaos(parsed.options, result)}\n`);
  if (parsed.json)
    writeFileSync(parsed.json, `${JSON.stringify({ options: parsed.options, result }, null, 2)}\n`);
  return result.lost === 0 && result.duplicated === 0 && result.stranded === 0 ? 0 : 1;
}

async function clusterMain(options: ClusterChaosOptions, json: string, html: string): Promise<number> {
  const startedAt = new Date().toISOString();
  let result: ClusterChaosResult;
  try {
    result = await runClusterChaos(options);
  } catch (err) {
    process.stderr.write(
      `bayou-loadtest chaos: ${(err as Error).message} (see bayou-loadtest chaos --help)\n`,
    );
    return 1;
  }
  process.stdout.write(`${formatClusterChaos(options, result)}\n`);
  if (json) writeFileSync(json, `${JSON.stringify({ options, result }, null, 2)}\n`);
  if (html) writeFileSync(html, renderClusterHtml(options, result, startedAt));
  return clusterChaosPassed(result) ? 0 : 1;
}
