/**
 * The lines of the `--workers` primary, which has no Fastify logger of its own: plain on a
 * terminal (the workers' log is pretty there), JSON lines in pino's shape when the workers
 * log JSON, so that stdout never mixes the two.
 */
import { hostname } from 'node:os';
import { STANDALONE_DEFAULTS } from '../server-defaults.js';
import type { BayouConfig } from './define-config.js';

export interface PrimaryLog {
  say(line: string): void;
  warn(line: string): void;
}

function jsonLine(level: number, msg: string): string {
  return `${JSON.stringify({ level, time: Date.now(), pid: process.pid, hostname: hostname(), msg })}\n`;
}

export function primaryLog(config: BayouConfig, isTTY: boolean): PrimaryLog {
  const format = config.logFormat ?? STANDALONE_DEFAULTS.logFormat;
  const level = config.logLevel ?? STANDALONE_DEFAULTS.logLevel;
  const json =
    config.logger === undefined && level !== 'silent' && (format === 'json' || (format === 'auto' && !isTTY));
  if (!json)
    return {
      say: (line) => process.stdout.write(`${line}\n`),
      warn: (line) => process.stderr.write(`bayou: ${line}\n`),
    };
  const quiet = ['error', 'fatal'].includes(level);
  return {
    // Like the single process's listening line: shown at every level.
    say: (line) => process.stdout.write(jsonLine(30, line)),
    warn: (line) => {
      if (!quiet) process.stdout.write(jsonLine(40, line));
    },
  };
}
