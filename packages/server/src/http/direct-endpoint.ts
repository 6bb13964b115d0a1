/**
 * The long-polling endpoint's direct path. Each long-poll is a full HTTP request/response
 * cycle, and Fastify's per-request machinery (routing, request and reply objects, the hook
 * runner, content-type parsing, reply serialization) cost about as much as the Bayeux work
 * itself. When nothing of the application can run on the endpoint's requests — no request
 * lifecycle hook (`onRequest`, `preParsing`, … `onResponse`) in its scope — a `POST` to the
 * endpoint is served from the raw `node:http` request instead; every other request (the
 * app's routes, WebSocket upgrades, preflights) goes to Fastify as before.
 *
 * Fastify stays the path whenever it could make a difference: with any lifecycle hook, with
 * `trustProxy` (Fastify computes `request.ip` and the protocol), over HTTP/2, while the app
 * is closing (Fastify answers 503), and when the server's request listener is not Fastify's
 * alone. The choice is made once, when the app is ready.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Fastify's request lifecycle hooks: any of them in the endpoint's scope keeps it in Fastify. */
const LIFECYCLE_HOOKS = [
  'onRequest',
  'preParsing',
  'preValidation',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onRequestAbort',
] as const;

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface DirectEndpointOptions {
  /** The endpoint's path: `POST <path>` and `POST <path>/…` are served directly. */
  path: string;
  serve: Listener;
  /** True once the app is closing: requests then go to Fastify. */
  closing: () => boolean;
}

const served = new WeakSet<FastifyInstance>();

/** Whether `app`'s long-polling endpoint took the direct path when it got ready. */
export function servedDirectly(app: FastifyInstance): boolean {
  return served.has(app);
}

/**
 * Why the endpoint of `scope` cannot be served directly, or `null` when it can. Reads
 * Fastify's hook lists of the scope (there is no public accessor); if they cannot be found
 * the answer is "cannot", so a future Fastify never loses the app's hooks.
 */
export function directPathRefusal(app: FastifyInstance, scope: FastifyInstance): string | null {
  const config = app.initialConfig as { http2?: boolean; trustProxy?: unknown };
  if (config.http2 === true) return 'HTTP/2';
  if (config.trustProxy !== undefined && config.trustProxy !== false) return 'trustProxy is set';
  const key = Object.getOwnPropertySymbols(scope).find((s) => s.description === 'fastify.hooks');
  const hooks = key === undefined ? undefined : (scope as unknown as Record<symbol, unknown>)[key];
  if (typeof hooks !== 'object' || hooks === null) return 'the scope hooks cannot be read';
  for (const name of LIFECYCLE_HOOKS) {
    const list = (hooks as Record<string, unknown>)[name];
    if (!Array.isArray(list)) return 'the scope hooks cannot be read';
    if (list.length > 0) return `the app has ${name} hooks`;
  }
  return null;
}

/**
 * Registers, in the endpoint's scope, the switch to the direct path when the app is ready
 * (see the module comment for when it is refused).
 */
export function directEndpoint(
  app: FastifyInstance,
  scope: FastifyInstance,
  options: DirectEndpointOptions,
): void {
  scope.addHook('onReady', async () => {
    const refusal = directPathRefusal(app, scope);
    const server = app.server as Server;
    const listeners = server.listeners('request') as Listener[];
    const why = refusal ?? (listeners.length === 1 ? null : 'the server has other request listeners');
    if (why !== null) {
      app.log.debug({ reason: why }, 'long-polling served through Fastify');
      return;
    }
    const fastify = listeners[0] as Listener;
    const base = options.path.replace(/\/$/, '');
    const exact = options.path;
    const { serve, closing } = options;
    const dispatch: Listener = function dispatch(req, res) {
      if (req.method === 'POST' && !closing()) {
        const url = req.url ?? '';
        const q = url.indexOf('?');
        const path = q < 0 ? url : url.slice(0, q);
        if (path === exact || (path.startsWith(base) && path.charCodeAt(base.length) === 47)) {
          serve(req, res);
          return;
        }
      }
      fastify.call(server, req, res);
    };
    server.removeListener('request', fastify);
    server.on('request', dispatch);
    served.add(app);
  });
}
