/**
 * The process's soft limit on open files (`ulimit -n`), from which the default cap on open
 * connections is derived: a cap below it means a flood of idle sockets is refused before
 * the process runs out of descriptors for its real clients, Redis and files.
 */
import { readFileSync } from 'node:fs';

/** The soft `Max open files` of this process, or `null` where it cannot be read (not Linux). */
export function openFileLimit(
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number | null {
  let text: string;
  try {
    text = read();
  } catch {
    return null;
  }
  const line = /^Max open files\s+(\d+)/m.exec(text);
  return line === null ? null : Number(line[1]);
}

/** Connections accepted when none is configured: 90% of the open-file limit, else 10,000. */
export function defaultMaxConnections(limit: number | null = openFileLimit()): number {
  return limit === null ? 10_000 : Math.max(1, Math.floor(limit * 0.9));
}
