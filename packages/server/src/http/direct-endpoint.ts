/**
 * The long-polling endpoint's direct path. Each long-poll is a full HTTP request/response
 * cycle, and Fastify's per-request machinery (routing, request and reply objects, the hook
 * runner, content-type parsing, reply serialization) is about a tenth of its cost. When
 * nothing of the application can run on the endpoint's requests — no request lifecycle
 * hook (`onRequest`, `preParsing`, … `onResponse`) in its scope — a `POST` to the endpoint
 * is served from the raw `node:http` request instead; every other request (the app's
 * routes, WebSocket upgrades, preflights) goes to Fastify as before.
 *
 * The client's IP and protocol are what Fastify's `request.ip` and `request.protocol`
 * would say, `trustProxy` included (the same `@fastify/proxy-addr` rules). Fastify stays
 * the path whenever it could make a difference: with any lifecycle hook, with `rewriteUrl`
 * or a `serverFactory`, over HTTP/2, while the app is closing (Fastify answers 503), and
 * when the server's request listener is not Fastify's alone. The choice is made once, when
 * the app is ready. The same listener first lets the connection guard answer requests on
 * connections refused past `maxConnections`, whichever path would serve them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
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
/** Serves one request; `ip` and `secure` as Fastify's `request.ip` and `request.protocol` say. */
export type DirectServe = (
  req: IncomingMessage,
  res: ServerResponse,
  ip: string | undefined,
  secure: boolean,
) => void;
type Trust = (address: string, hop: number) => boolean;

export interface DirectEndpointOptions {
  /** The endpoint's path: `POST <path>` and `POST <path>/…` are served directly. */
  path: string;
  serve: DirectServe;
  /** Serves `GET <path>/…` (an EventSource stream), when given. */
  serveGet?: DirectServe | undefined;
  /** True once the app is closing: requests then go to Fastify. */
  closing: () => boolean;
  /**
   * Sees every request first, whichever path serves it, and returns `true` when it
   * answered it (a connection refused past `maxConnections`).
   */
  refuse?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** The request listener that dispatches between the direct path and Fastify; `direct` says which it may take. */
type Dispatch = Listener & { readonly direct?: boolean };

/**
 * Whether `app`'s long-polling endpoint took the direct path when it got ready: read from
 * the server's request listener itself, so no registry outlives or outnumbers the apps.
 */
export function servedDirectly(app: FastifyInstance): boolean {
  const listeners = (app.server as Server).listeners('request') as Dispatch[];
  return listeners.some((listener) => listener.direct === true);
}

/** A Fastify internal kept under a symbol (`lib/symbols.js`), found by its description. */
function internal(instance: FastifyInstance, description: string): unknown {
  const key = Object.getOwnPropertySymbols(instance).find((s) => s.description === description);
  return key === undefined ? undefined : (instance as unknown as Record<symbol, unknown>)[key];
}

/** The options the app was created with (`trustProxy` is not in `initialConfig`). */
function fastifyOptions(
  app: FastifyInstance,
): { trustProxy?: unknown; rewriteUrl?: unknown; serverFactory?: unknown } | undefined {
  const options = internal(app, 'fastify.options');
  return typeof options === 'object' && options !== null ? (options as { trustProxy?: unknown }) : undefined;
}

/**
 * Why the endpoint of `scope` cannot be served directly, or `null` when it can. Reads
 * Fastify's hook lists of the scope (there is no public accessor); if they cannot be found
 * (or the app's options, for `trustProxy`) the answer is "cannot", so a future Fastify
 * never loses the app's hooks.
 */
export function directPathRefusal(app: FastifyInstance, scope: FastifyInstance): string | null {
  const config = app.initialConfig as { http2?: boolean };
  if (config.http2 === true) return 'HTTP/2';
  const own = fastifyOptions(app);
  if (own === undefined) return 'the app options cannot be read';
  if (own.rewriteUrl !== undefined) return 'rewriteUrl is set';
  // A serverFactory's own request listener may do its own work before Fastify's.
  if (own.serverFactory !== undefined) return 'serverFactory is set';
  const hooks = internal(scope, 'fastify.hooks');
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
    const server = app.server as Server;
    const listeners = server.listeners('request') as Listener[];
    if (listeners.length !== 1) {
      app.log.debug(
        { reason: 'the server has other request listeners' },
        'long-polling served through Fastify',
      );
      return;
    }
    const refusal = directPathRefusal(app, scope);
    if (refusal !== null) app.log.debug({ reason: refusal }, 'long-polling served through Fastify');
    const direct = refusal === null;
    const fastify = listeners[0] as Listener;
    const base = options.path.replace(/\/$/, '');
    const exact = options.path;
    const { serve, serveGet, closing, refuse } = options;
    const { ip, secure } = peerOf(fastifyOptions(app)?.trustProxy);
    const dispatch: Dispatch = function dispatch(req, res) {
      if (refuse?.(req, res) === true) return;
      const post = req.method === 'POST';
      if (direct && (post || (serveGet !== undefined && req.method === 'GET')) && !closing()) {
        const url = req.url ?? '';
        const q = url.indexOf('?');
        const path = q < 0 ? url : url.slice(0, q);
        const under = path.startsWith(base) && path.charCodeAt(base.length) === 47;
        if (post && (path === exact || under)) {
          serve(req, res, ip(req), secure(req));
          return;
        }
        // `GET <path>/<clientId>`: the EventSource route's, as Fastify would route it.
        if (!post && under && serveGet !== undefined) {
          serveGet(req, res, ip(req), secure(req));
          return;
        }
      }
      fastify.call(server, req, res);
    };
    // Without the direct path and without refusals, Fastify keeps its listener untouched.
    if (!direct && refuse === undefined) return;
    Object.defineProperty(dispatch, 'direct', { value: direct });
    server.removeListener('request', fastify);
    server.on('request', dispatch);
  });
}

/**
 * The Fastify release whose reading of `trustProxy` `peerOf` copies: from it on a hop count
 * trusts no peer (5.12.0 trusted that many hops). The package's Fastify peer range and the
 * plugin's `fastify` metadata start here, so no older rule can disagree with the copy.
 */
export const TRUST_RULE_FASTIFY = '5.12.1';

/** Fastify's reading of its `trustProxy` option (`lib/request.js`), as one trust function. */
function trustOf(trustProxy: unknown): Trust | null {
  if (trustProxy === undefined || trustProxy === false || trustProxy === null) return null;
  if (typeof trustProxy === 'function') return trustProxy as Trust;
  if (trustProxy === true) return () => true;
  // Fastify fails closed on a hop count: the immediate peer cannot be checked.
  if (typeof trustProxy === 'number') return () => false;
  if (typeof trustProxy === 'string') return proxyAddr.compile(trustProxy.split(',').map((it) => it.trim()));
  return proxyAddr.compile(trustProxy as string[]);
}

function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',');
  return comma < 0 ? value.trim() : value.slice(comma + 1).trim();
}

const encrypted = (req: IncomingMessage): boolean =>
  (req.socket as { encrypted?: boolean }).encrypted === true;

/** `request.ip` and `request.protocol === 'https'` as Fastify computes them under `trustProxy`. */
export function peerOf(trustProxy: unknown): {
  ip: (req: IncomingMessage) => string | undefined;
  secure: (req: IncomingMessage) => boolean;
} {
  const trust = trustOf(trustProxy);
  if (trust === null) return { ip: (req) => req.socket.remoteAddress, secure: encrypted };
  return {
    ip: (req) => {
      const all = proxyAddr.all(req, trust);
      return all[all.length - 1];
    },
    secure: (req) => {
      const proto = req.headers['x-forwarded-proto'];
      const peer = req.socket.remoteAddress;
      if (typeof proto === 'string' && proto !== '' && peer !== undefined && trust(peer, 0))
        return lastEntry(proto) === 'https';
      return encrypted(req);
    },
  };
}
