/** `--help` text, made from the option table so it cannot drift from the parser. */
import { DEFAULTS, flagName, OPTION_SPECS, type OptionSpec, type Scenario } from './options.js';

const EXIT_CODES = [
  'exit code: 0 ok, 1 loss/duplicates/failed sessions, 2 usage or a server that cannot be reached or refuses',
  'every handshake, 3 --max-latency exceeded',
].join('\n');

function formatDefault(spec: OptionSpec): string {
  const v = DEFAULTS[spec.key];
  if (spec.key === 'metricsUrl') return '/metrics on the origin of --url';
  if (spec.kind === 'ms') return `${v}ms`;
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.join(',');
  if (v === '' || v === null) return 'none';
  return String(v);
}

const SCENARIO_HELP: Record<Scenario, string[]> = {
  chat: [
    'CometD benchmark: every client joins --rooms-per-client random rooms of --rooms (channels /chat/<n>);',
    'messages go from a random client to one of its rooms, every member receives them. Publishing:',
    '--batches of --batch-size with --pause (default), --rate N (open loop) or --max-outstanding N',
    '(closed loop); with --duration, for that long after --warmup.',
  ],
  feed: [
    'clients watch --subjects-per-client of --subjects subjects updated --rate times a second.',
    '--source publisher: the generator publishes on /feed/<n> (any Bayeux server);',
    "--source demo: a Bayou server's --demo-feed produces /demo/prices/<SYMBOL> records.",
  ],
  connections: [
    'ramps up to --clients idle sessions at --ramp per second, each subscribed to /loadtest/idle,',
    "holds them for --hold, and reports the connect rate and (with /metrics) the server's memory per session.",
  ],
};

/** `--help`: every scenario and option; `helpText('chat')`: that scenario and the options it reads. */
export function helpText(scenario?: Scenario): string {
  if (scenario !== undefined) {
    const lines = [
      `usage: bayou-loadtest ${scenario} [options]`,
      '',
      ...SCENARIO_HELP[scenario].map((l) => `  ${l}`),
      '',
      'options (durations take ms, s, m, h):',
    ];
    for (const spec of OPTION_SPECS) {
      if (spec.scenarios && !spec.scenarios.includes(scenario)) continue;
      lines.push(`  ${`--${flagName(spec.key)}`.padEnd(22)} ${spec.help} (default ${formatDefault(spec)})`);
    }
    lines.push('', EXIT_CODES);
    return lines.join('\n');
  }
  return fullHelp();
}

function fullHelp(): string {
  const lines = [
    'usage: bayou-loadtest <chat|feed|connections|chaos> [options]',
    '       bayou-loadtest <chat|feed|connections|chaos> --help   (that scenario and its options)',
    '',
    '  chat         CometD benchmark: clients in random rooms, messages to random rooms',
    '  feed         clients watch --subjects-per-client of --subjects subjects updated --rate times a second;',
    "               --source publisher: the driver publishes them; --source demo: the server's demo feed does",
    '  connections  ramp to --clients idle sessions at --ramp/s, hold, report memory per session',
    '  chaos        the chaos chat: connections (or --cluster nodes) killed throughout, nothing may be',
    '               lost or duplicated; its own options: bayou-loadtest chaos --help',
    '',
    'options of chat, feed and connections (durations take ms, s, m, h):',
  ];
  for (const spec of OPTION_SPECS) {
    const flag = `--${flagName(spec.key)}`.padEnd(22);
    const only = spec.scenarios ? ` [${spec.scenarios.join(', ')}]` : '';
    lines.push(`  ${flag} ${spec.help}${only} (default ${formatDefault(spec)})`);
  }
  lines.push('', EXIT_CODES);
  return lines.join('\n');
}
