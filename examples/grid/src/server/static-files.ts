/**
 * Serves the built page (a handful of files read once at start) from the grid's Fastify
 * app. A fixed list of routes, so no request path ever reaches the file system.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { BayouServer } from '@bayou/server';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self' ws: wss:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function serveStatic(app: BayouServer['app'], dir: string): void {
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(dir, name));
    const paths = name === 'index.html' ? ['/', '/index.html'] : [`/${name}`];
    for (const path of paths) {
      app.get(path, (_request, reply) => {
        reply
          .type(type)
          .header('cache-control', 'no-cache')
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', CSP)
          .send(body);
      });
    }
  }
}
