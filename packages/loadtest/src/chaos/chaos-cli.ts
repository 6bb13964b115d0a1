/**
 * `bayou-loadtest chaos`: the chaos chat from the command line. Flags with their defaults
 * in one table; prints a report and exits 1 when anything was lost or duplicated.
 */
import { writeFileSync } from 'node:fs';
import { type ChaosOptions, type ChaosResult, runChaos } from './chaos-run.js';

interface Flag {
  key: keyof ChaosOptions | 'json';
  flag: string;
  help: string;
  default: string;
  kind: 'string' | 'number' | 'ms';
}

const FLAGS: readonly Flag[] = [
  {
    key: 'url',
    flag: 'url',
    kind: 'string',
    default: 'http://127.0.0.1:8080/bayeux',
    help: 'Bayeux endpoint',
  },
  {
    key: 'transport',
    flag: 'transport',
    kind: 'string',
    default: 'websocket',
    help: 'websocket or long-polling',
  },
  {
    key: 'clients',
    flag: 'clients',
    kind: 'number',
    default: '1000',
    help: 'clients (real @bayou/client instances)',
  },
  { key: 'rooms', flag: 'rooms', kind: 'number', default: '100', help: 'rooms' },
  {
    key: 'roomsPerClient',
    flag: 'rooms-per-client',
    kind: 'number',
    default: '10',
    help: 'rooms each client joins',
  },
  {
    key: 'rate',
    flag: 'rate',
    kind: 'number',
    default: '100',
    help: 'messages per second the publisher sends',
  },
  { key: 'duration', flag: 'duration', kind: 'ms', default: '60s', help: 'how long the publisher runs' },
  {
    key: 'chaosInterval',
    flag: 'chaos',
    kind: 'ms',
    default: '3s',
    help: 'mean time between connection kills (0: none)',
  },
  {
    key: 'outageFraction',
    flag: 'outage-fraction',
    kind: 'number',
    default: '0.2',
    help: 'fraction of kills that keep the client down for --outage',
  },
  {
    key: 'outageMs',
    flag: 'outage',
    kind: 'ms',
    default: '15s',
    help: "how long a held-down client stays away (longer than the server's maxInterval)",
  },
  {
    key: 'drainMs',
    flag: 'drain',
    kind: 'ms',
    default: '30s',
    help: 'longest wait for stragglers after the last publish',
  },
  { key: 'seed', flag: 'seed', kind: 'number', default: '1', help: 'room assignment and chaos seed' },
  {
    key: 'prefix',
    flag: 'channel-prefix',
    kind: 'string',
    default: '/chaos/',
    help: 'channel prefix of the rooms',
  },
  {
    key: 'json',
    flag: 'json',
    kind: 'string',
    default: '',
    help: 'also write the result as JSON to this file',
  },
];

export const CHAOS_USAGE = `Usage: bayou-loadtest chaos [options]

Runs the chaos chat: real @bayou/client instances (acknowledgements and recovery on, as
they ship) in rooms, one publisher numbering each room's messages, while connections are
killed at random and some clients are held down past the server's maxInterval. Counts
every lost and duplicated message; exits 1 if there is any.

${FLAGS.map((f) => `  --${`${f.flag} <${f.kind === 'ms' ? 'time' : f.kind === 'number' ? 'n' : 'value'}>`.padEnd(28)}${f.help} (default ${f.default || 'none'})`).join('\n')}

Times take ms, s or m: 500ms, 3s, 10m.`;

function duration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (m === null) throw new Error(`--${flag}: "${text}" is not a time; write e.g. 500ms, 3s or 10m`);
  const n = Number(m[1]);
  return m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
}

export function parseChaosArgs(argv: readonly string[]): { options: ChaosOptions; json: string } {
  const values = new Map(FLAGS.map((f) => [f.flag, f.default]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (!values.has(name)) throw new Error(`unknown option "${arg}" (see bayou-loadtest chaos --help)`);
    const value = argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    values.set(name, value);
  }
  const options: Record<string, unknown> = {};
  for (const f of FLAGS) {
    const raw = values.get(f.flag) as string;
    if (f.kind === 'string') options[f.key] = raw;
    else if (f.kind === 'ms') options[f.key] = duration(raw, f.flag);
    else {
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0)
        throw new Error(`--${f.flag}: "${raw}" must be a non-negative number`);
      options[f.key] = n;
    }
  }
  if (options.transport !== 'websocket' && options.transport !== 'long-polling')
    throw new Error(`--transport must be websocket or long-polling, got "${String(options.transport)}"`);
  const { json, ...rest } = options;
  return { options: rest as unknown as ChaosOptions, json: json as string };
}

export function formatChaos(options: ChaosOptions, r: ChaosResult): string {
  const verdict = r.lost === 0 && r.duplicated === 0 && r.stranded === 0 ? 'PASS' : 'FAIL';
  return [
    `chaos chat over ${options.transport}: ${options.clients} clients, ${options.rooms} rooms, ${options.roomsPerClient} each, ${options.rate} msg/s for ${options.duration / 1000} s`,
    `  kills ${r.kills} (every ${options.chaosInterval / 1000} s on average), of them held down ${options.outageMs / 1000} s: ${r.outages}`,
    `  published ${r.published}; deliveries expected ${r.expected}, delivered ${r.delivered}`,
    `  lost ${r.lost}, duplicated ${r.duplicated}, gap events ${r.gaps}, clients not reconnected ${r.stranded}`,
    `  ${r.seconds.toFixed(1)} s in all — ${verdict}`,
  ].join('\n');
}

export async function chaosMain(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${CHAOS_USAGE}\n`);
    return 0;
  }
  let parsed: ReturnType<typeof parseChaosArgs>;
  try {
    parsed = parseChaosArgs(argv);
  } catch (err) {
    process.stderr.write(`bayou-loadtest chaos: ${(err as Error).message}\n`);
    return 2;
  }
  const result = await runChaos(parsed.options);
  process.stdout.write(`${formatChaos(parsed.options, result)}\n`);
  if (parsed.json)
    writeFileSync(parsed.json, `${JSON.stringify({ options: parsed.options, result }, null, 2)}\n`);
  return result.lost === 0 && result.duplicated === 0 && result.stranded === 0 ? 0 : 1;
}
