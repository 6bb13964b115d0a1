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
/**
 * A port free now, for a process the test starts (and may restart) on it. Chosen below the
 * kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 up here): a port
 * from `listen(0)` is an ephemeral one, which any client connection on the machine may take
 * as its source port before a restarted node binds it again (seen as EADDRINUSE on a busy
 * machine).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(port)) return port;
  }
  throw new Error('no free port below the ephemeral range after 50 tries');
}

function bindable(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
