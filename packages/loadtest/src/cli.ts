#!/usr/bin/env node
/** bayou-loadtest <chat|feed|connections> [options] */
import { main } from './cli-main.js';
import { ExitCodes } from './errors.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    process.stderr.write(`bayou-loadtest: ${error.stack ?? error.message}\n`);
    process.exitCode = ExitCodes.LOSS;
  },
);
