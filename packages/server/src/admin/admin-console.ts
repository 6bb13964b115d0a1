/**
 * The operator's console at `/admin` (`bayou start --admin`): a login form that exchanges
 * the password for a short-lived token (an HttpOnly cookie for the page, the same token in
 * the page for its Bayeux handshake), the console page and its bundled script, and the
 * live feed and actions over Bayou (`admin-feed.ts`). Every route but the login form and
 * the login itself answers 401 without a valid token.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { operationsOf } from '../kernel/node-operations.js';
import { AdminFeed } from './admin-feed.js';
import { consolePage, loginPage } from './admin-pages.js';
import { AdminCredential, TOKEN_TTL_MS } from './admin-token.js';
import { LoginLimiter } from './login-limiter.js';
import { NodeWatch, sourcesOf } from './node-stats.js';

export interface AdminConsoleOptions {
  /** The operator's password. Unset: any password logs in (keep such a server on loopback). */
  password?: string;
  /** The Bayeux endpoint the page connects to. Default `'/bayeux'`. */
  path?: string;
}

const COOKIE = 'bayou_admin';

/** Routes the console answers without a token. */
const OPEN_ROUTES = new Set(['GET /admin', 'POST /admin/login']);

function cookieToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (part.slice(0, eq).trim() === COOKIE) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

function tokenOf(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7);
  return cookieToken(request);
}

/**
 * The bundled page script, built by `admin/build.mjs` into dist/admin/: next to this
 * module (ESM), beside dist/index.cjs (CommonJS), or in dist when run from src (tests).
 */
function readScript(): string | null {
  for (const rel of ['./console.js', './admin/console.js', '../../dist/admin/console.js']) {
    try {
      return readFileSync(new URL(rel, import.meta.url), 'utf8');
    } catch {
      // Try the next place.
    }
  }
  return null;
}

function passwordOf(body: unknown): unknown {
  if (typeof body === 'string') return new URLSearchParams(body).get('password');
  if (body !== null && typeof body === 'object') return (body as Record<string, unknown>).password;
  return undefined;
}

export async function adminConsole(app: FastifyInstance, options: AdminConsoleOptions): Promise<void> {
  const credential = new AdminCredential(options.password);
  const ops = operationsOf(app);
  const feed = new AdminFeed(app.bayou, ops, credential);
  const watch = new NodeWatch(app.bayou, ops, sourcesOf(app));
  app.bayou.addExtension(feed);
  const detach = [ops.taps.serveStats(() => watch.read()), ops.taps.openConsole(feed.gate)];
  app.addHook('onClose', async () => {
    for (const off of detach) off();
    feed.close();
    watch.stop();
  });
  const script = readScript();
  const logins = new LoginLimiter();
  const path = options.path ?? '/bayeux';

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_r, body, done) =>
      done(null, body),
    );
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
      if (OPEN_ROUTES.has(route)) return;
      if (!credential.valid(tokenOf(request)))
        return reply.code(401).send({ error: 'log in at /admin first (missing or expired console token)' });
    });

    scope.get('/admin', async (request, reply) => {
      reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
      const token = cookieToken(request);
      return credential.valid(token) ? consolePage(token as string, path) : loginPage(null);
    });

    scope.post('/admin/login', async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const form = typeof request.body === 'string';
      const wait = logins.blockedFor(request.ip);
      if (wait > 0) {
        reply.code(429).header('retry-after', String(Math.ceil(wait / 1000)));
        const message = `Too many wrong passwords from this address: try again in ${Math.ceil(wait / 1000)} s.`;
        return form ? reply.type('text/html; charset=utf-8').send(loginPage(message)) : { error: message };
      }
      if (!credential.passwordMatches(passwordOf(request.body))) {
        logins.failed(request.ip);
        reply.code(401);
        return form
          ? reply.type('text/html; charset=utf-8').send(loginPage('Wrong password.'))
          : { error: 'wrong password' };
      }
      const token = credential.issue();
      const secure = request.protocol === 'https' ? '; Secure' : '';
      reply.header(
        'set-cookie',
        `${COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${TOKEN_TTL_MS / 1000}${secure}`,
      );
      return form ? reply.redirect('/admin', 303) : { token };
    });

    scope.post('/admin/logout', async (_request, reply) => {
      reply.header('set-cookie', `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=0`);
      return reply.redirect('/admin', 303);
    });

    scope.get('/admin/console.js', async (_request, reply) => {
      if (script === null)
        return reply
          .code(500)
          .send({ error: 'the console script is not built: run npm run build in packages/server' });
      return reply.header('cache-control', 'no-store').type('text/javascript; charset=utf-8').send(script);
    });
  });
}
