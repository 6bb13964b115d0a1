/**
 * What the suites that run external programs (redis-server, nginx) share: finding the
 * program and a free loopback port for it.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The program `name`: the path in `envVar` (set by scripts/services.mjs) when given, else
 * the first on PATH or in the usual sbin directories; null when this machine has none.
 */
export function programPath(name: string, envVar: string): string | null {
  const given = process.env[envVar];
  if (given) return existsSync(given) ? given : null;
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
