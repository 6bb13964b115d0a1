#!/usr/bin/env node
/** bayou-loadtest <chat|feed|connections|chaos> [options] */
import { chaosMain } from './chaos/chaos-cli.js';
import { main } from './cli-main.js';
import { ExitCodes } from './errors.js';

const argv = process.argv.slice(2);
const run = argv[0] === 'chaos' ? chaosMain(argv.slice(1)) : main(argv);
run.then(
  (code) => {
    process.exitCode = code;
    // The chaos run's clients may leave reconnect timers behind: end once the report is out.
    if (argv[0] === 'chaos') setImmediate(() => process.exit(code));
  },
  (error: Error) => {
    process.stderr.write(`bayou-loadtest: ${error.stack ?? error.message}\n`);
    process.exitCode = ExitCodes.LOSS;
  },
);
