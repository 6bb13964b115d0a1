/** The bayou-loadtest command: parse, run, print, write --json/--html, return the exit code. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ExitCodes, LoadtestError } from './errors.js';
import { helpText } from './help-text.js';
import { renderHtml } from './html-report.js';
import { parseArgs, redactOptions, resolveOptions } from './options.js';
import { preflight } from './preflight.js';
import { progressLine, renderReport } from './report.js';
import { runScenario } from './runner.js';

export interface CliIo {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown; isTTY?: boolean };
}

export async function main(
  argv: readonly string[],
  io: CliIo = { out: process.stdout, err: process.stderr },
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
    // Options that only clash together (--client browser with websocket) fail here, as usage.
    if (parsed.scenario) resolveOptions(parsed.options);
  } catch (error) {
    if (!(error instanceof LoadtestError)) throw error;
    io.err.write(`${error.message}\n\n${helpText()}\n`);
    return ExitCodes.USAGE;
  }
  if (parsed.help || !parsed.scenario) {
    io.out.write(`${helpText(parsed.scenario)}\n`);
    return parsed.help ? ExitCodes.OK : ExitCodes.USAGE;
  }
  try {
    // Nothing listening, or every handshake refused: say so now, not after a run that lost everything.
    await preflight(resolveOptions(parsed.options));
  } catch (error) {
    if (!(error instanceof LoadtestError)) throw error;
    io.err.write(`bayou-loadtest ${parsed.scenario}: ${error.message}\n`);
    return ExitCodes.USAGE;
  }
  const live = parsed.options.progress !== false && io.err.isTTY === true;
  const result = await runScenario(parsed.scenario, parsed.options, {
    onProgress: (p) => {
      if (parsed.options.progress === false) return;
      // A TTY gets one line rewritten in place; a pipe or log gets a line per second.
      io.err.write(live ? `\r${progressLine(p)}\x1b[K` : `${progressLine(p)}\n`);
    },
  });
  if (live) io.err.write('\n');
  io.out.write(`${renderReport(result)}\n`);
  if (result.options.json) {
    const json = { ...result, options: redactOptions(result.options) };
    await writeFile(result.options.json, `${JSON.stringify(json, null, 2)}\n`);
    io.out.write(`wrote ${resolve(result.options.json)}\n`);
  }
  if (result.options.html) {
    await writeFile(result.options.html, renderHtml(result));
    io.out.write(`wrote ${resolve(result.options.html)} (open it in a browser)\n`);
  }
  return result.exitCode;
}
