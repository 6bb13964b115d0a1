/**
 * `pnpm start` for the grid demo: serves it on PORT (default 8080) and HOST (default
 * 127.0.0.1: an open server, so this machine only unless told) with the demo feed (GRID_SYMBOLS symbols, default 10,000, each updating
 * GRID_RATE times a second, default 1), prints the URL, shuts down on SIGINT/SIGTERM.
 */
import { createGridServer } from './grid-server.js';

function numberFrom(name: string, fallback: number, valid: (n: number) => boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!valid(n)) {
    console.error(`${name} is not valid: "${raw}"`);
    process.exit(2);
  }
  return n;
}

const port = numberFrom('PORT', 8080, (n) => Number.isInteger(n) && n >= 0 && n <= 65535);
const symbols = numberFrom('GRID_SYMBOLS', 10_000, (n) => Number.isInteger(n) && n > 0 && n <= 17_576);
const rate = numberFrom('GRID_RATE', 1, (n) => n > 0 && n <= 100);
const host = process.env.HOST || '127.0.0.1';

const server = await createGridServer({ host, port, symbols, rate });

let closing = false;
function shutdown(): void {
  if (closing) return;
  closing = true;
  server.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const url = await server.listen();
const local = host === '127.0.0.1' || host === 'localhost' || host === '::1';
console.log(
  `Bayou live grid: ${url}/?rows=10000 (open server: ${local ? 'this machine only, HOST=0.0.0.0 shares it' : `listening on ${host}`})`,
);
