#!/usr/bin/env node
/** bayou-loadtest <chat|feed|connections> [options] */
import { writeFile } from 'node:fs/promises';
import { ExitCodes, LoadtestError } from './errors.js';
import { renderHtml } from './html-report.js';
import { helpText, parseArgs } from './options.js';
import { progressLine, renderReport } from './report.js';
import { runScenario } from './runner.js';

export async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof LoadtestError)) throw error;
    process.stderr.write(`${error.message}\n\n${helpText()}\n`);
    return ExitCodes.USAGE;
  }
  if (parsed.help || !parsed.scenario) {
    process.stdout.write(`${helpText()}\n`);
    return parsed.help ? ExitCodes.OK : ExitCodes.USAGE;
  }
  const live = parsed.options.progress !== false && process.stderr.isTTY === true;
  const result = await runScenario(parsed.scenario, parsed.options, {
    onProgress: (p) => {
      if (parsed.options.progress === false) return;
      // A TTY gets one line rewritten in place; a pipe or log gets a line per second.
      process.stderr.write(live ? `\r${progressLine(p)}\x1b[K` : `${progressLine(p)}\n`);
    },
  });
  if (live) process.stderr.write('\n');
  process.stdout.write(`${renderReport(result)}\n`);
  if (result.options.json) await writeFile(result.options.json, `${JSON.stringify(result, null, 2)}\n`);
  if (result.options.html) await writeFile(result.options.html, renderHtml(result));
  return result.exitCode;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    process.stderr.write(`bayou-loadtest: ${error.stack ?? error.message}\n`);
    process.exitCode = ExitCodes.LOSS;
  },
);
