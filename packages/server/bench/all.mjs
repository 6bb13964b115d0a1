#!/usr/bin/env node
// @ts-check
// This package's `pnpm bench`: the records benchmark, the history memory benchmark, the
// backend hooks benchmark, the presence benchmark and the bandwidth benchmarks (WebSocket, HTTP, the
// HTTP codecs), each handed the flags it knows
// (`--quick` goes to each).
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    clients: { type: 'string' },
    seconds: { type: 'string' },
    channels: { type: 'string' },
    caps: { type: 'string' },
    ttl: { type: 'string' },
    events: { type: 'string' },
    rounds: { type: 'string' },
    subscribes: { type: 'string' },
    idle: { type: 'string' },
  },
});

/** @typedef {keyof typeof values} Flag */

/**
 * The command-line flags of `names` that were given, to hand on to one script.
 * @param {Flag[]} names
 * @returns {string[]}
 */
const flags = (names) =>
  names.flatMap((n) => {
    const value = values[n];
    return value === undefined || value === false ? [] : value === true ? [`--${n}`] : [`--${n}`, value];
  });

for (const [script, names] of /** @type {[string, Flag[]][]} */ ([
  ['records.mjs', ['quick', 'clients', 'seconds']],
  ['history-memory.mjs', ['quick', 'channels', 'caps', 'ttl']],
  ['hooks.mjs', ['quick', 'events', 'subscribes', 'rounds']],
  ['presence.mjs', ['quick', 'clients']],
  ['bandwidth.mjs', ['quick', 'clients', 'seconds', 'idle']],
  ['http-bandwidth.mjs', ['quick', 'clients', 'seconds']],
  ['http-codecs.mjs', ['quick']],
])) {
  const file = new URL(script, import.meta.url).pathname;
  const { status } = spawnSync(process.execPath, [file, ...flags(names)], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
