/**
 * Turns a resolved `BayouConfig` into a running-ready server: the token and permission
 * hooks, the publish API, TLS files, the logger, and the safe defaults of the standalone
 * server (same-origin browsers only; listening on loopback while it is open to anyone).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { FastifyServerOptions } from 'fastify';
import { adminConsole } from '../admin/admin-console.js';
import { type BayouServer, type CreateServerOptions, createServer } from '../create-server.js';
import { publishApi } from '../http/publish-api.js';
import { serverApi } from '../http/server-api.js';
import { defaultOptions } from '../options.js';
import { STANDALONE_DEFAULTS } from '../server-defaults.js';
import { checkAllowedOrigins } from '../transports/request-info.js';
import type { BayouConfig } from './define-config.js';
import { configError } from './flags.js';
import { mergeLayers } from './merge-layers.js';

export interface BuiltServer {
  server: BayouServer;
  /** Whether handshakes need a token. */
  auth: { readonly tokensOn: boolean };
  /** The interface it will listen on. */
  host: string;
  /** One line saying how open the server is, for the start-up log. */
  posture: string;
  /**
   * Whether the log is JSON lines (`--log-format json`, or `auto` without a terminal): then
   * the CLI writes its own lines through the log too, so stdout is JSON only.
   */
  logsJson: boolean;
  shutdownTimeout: number;
}

const OWN_KEYS = [
  'tls',
  'tokens',
  'channels',
  'allowAnonymous',
  'apiKey',
  'publishApi',
  'shutdownTimeout',
  'workers',
  'logLevel',
  'logFormat',
  'authenticate',
  'canSubscribe',
  'canPublish',
  'admin',
] as const;

export const ADMIN_NEEDS_PASSWORD =
  '--admin on a server reachable from other hosts needs a password: set BAYOU_ADMIN_PASSWORD (or --admin-password, admin.password) to at least 12 characters, or listen on loopback (--host 127.0.0.1)';

const isLoopback = (host: string) => /^127\./.test(host) || host === '::1' || host === 'localhost';

/**
 * The key and certificate files, checked here so that a wrong file is named with the fix
 * rather than surfacing as OpenSSL's `DECODER routines::unsupported` from inside Fastify.
 */
function readTls(tls: { key: string; cert: string }): { key: Buffer; cert: Buffer } {
  const key = readPem(tls.key, 'key');
  const cert = readPem(tls.cert, 'certificate');
  const fix =
    'give a PEM private key (--tls-key) and its PEM certificate chain (--tls-cert), e.g. made with the openssl command in the README, or leave both out for plain http';
  const attempt = (options: SecureContextOptions, problem: string) => {
    try {
      createSecureContext(options);
    } catch (err) {
      throw configError(`cannot serve TLS: ${problem} (${(err as Error).message}) — ${fix}`);
    }
  };
  attempt({ key }, `${tls.key} is not a PEM private key`);
  attempt({ cert }, `${tls.cert} is not a PEM certificate`);
  attempt({ key, cert }, `the key ${tls.key} does not belong to the certificate ${tls.cert}`);
  return { key, cert };
}

/**
 * The console's options when it is on. A file's password gets the flag's check: an empty
 * or short one would let a guess in (any empty password matched an empty one).
 */
function adminOf(admin: BayouConfig['admin']): { enabled: true; password?: string } | null {
  if (admin === undefined) return null;
  if (admin.enabled !== undefined && typeof admin.enabled !== 'boolean')
    throw configError('admin.enabled (--admin, BAYOU_ADMIN) must be true or false');
  const { password } = admin;
  if (password !== undefined && (typeof password !== 'string' || password.length < 12))
    throw configError(
      'admin.password (--admin-password, BAYOU_ADMIN_PASSWORD) must be at least 12 characters',
    );
  if (admin.enabled !== true) return null;
  return password === undefined ? { enabled: true } : { enabled: true, password };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw configError(`cannot read the TLS ${what} ${path}: ${(err as Error).message}`);
  }
}

/** pino-pretty on a terminal (or when asked), JSON lines otherwise. */
export function loggerFor(config: BayouConfig, isTTY: boolean): FastifyServerOptions['logger'] {
  if (config.logger !== undefined) return config.logger;
  const level = config.logLevel ?? STANDALONE_DEFAULTS.logLevel;
  const format = config.logFormat ?? STANDALONE_DEFAULTS.logFormat;
  const pretty = format === 'pretty' || (format === 'auto' && isTTY);
  if (!pretty) return { level };
  // An absolute path: pino resolves a bare target from its own package, which may not see ours.
  const target = createRequire(import.meta.url).resolve('pino-pretty');
  return {
    level,
    transport: { target, options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  };
}

/**
 * The plugin's `auth` option of a config: its `auth` object with the top-level `tokens`,
 * `channels` and `allowAnonymous` (the flags' and environment's form) over it; `undefined`
 * when neither is there.
 */
export function authOf(config: BayouConfig): BayouConfig['auth'] {
  const top = {
    ...(config.tokens !== undefined ? { tokens: config.tokens } : {}),
    ...(config.channels !== undefined ? { channels: config.channels } : {}),
    ...(config.allowAnonymous !== undefined ? { allowAnonymous: config.allowAnonymous } : {}),
  };
  if (config.auth === undefined && Object.keys(top).length === 0) return undefined;
  // Key by key: a flag's `--jwt-audience` keeps the file's `auth.tokens.secret`.
  return mergeLayers({ ...config.auth }, top) as BayouConfig['auth'];
}

/**
 * The paced drain runs inside the shutdown timeout: a spread as long leaves the sessions not
 * yet handed over to the timeout's cut (they handshake again). One given that long is
 * refused; the default, under a shorter timeout, becomes half of it (returned).
 */
export function drainSpreadWithin(config: BayouConfig): number | undefined {
  const given = (config as { drainSpread?: number }).drainSpread;
  const spread = given ?? defaultOptions.drainSpread;
  const timeout = config.shutdownTimeout ?? STANDALONE_DEFAULTS.shutdownTimeout;
  if (spread === 0 || spread < timeout) return undefined;
  if (given === undefined) return Math.floor(timeout / 2);
  throw configError(
    `drainSpread (--drain-spread) ${spread} ms must be shorter than shutdownTimeout (--shutdown-timeout) ${timeout} ms: the drain happens within it; raise --shutdown-timeout (e.g. to ${spread + 5000}) or lower --drain-spread`,
  );
}

export async function buildServer(
  config: BayouConfig,
  isTTY = Boolean(process.stdout.isTTY),
): Promise<BuiltServer> {
  if ((config.tls?.key === undefined) !== (config.tls?.cert === undefined))
    throw configError('tls.key and tls.cert (--tls-key, --tls-cert) go together');
  const fittedSpread = drainSpreadWithin(config);
  // Tokens and channel rules become the plugin's `auth` option: its auth extension also
  // refreshes tokens, ends sessions whose token expired and binds long-polls to their cookie.
  // The top-level keys (what the flags set) and the file's own `auth` are one option.
  const authOption = authOf(config);
  const auth = { tokensOn: authOption?.tokens !== undefined };
  let allowedOrigins: string[];
  try {
    allowedOrigins = checkAllowedOrigins(config.allowedOrigins ?? []);
  } catch (err) {
    throw configError(`allowedOrigins (--allowed-origins): ${(err as Error).message}`);
  }
  const rest: Record<string, unknown> = { ...config };
  for (const key of OWN_KEYS) delete rest[key];
  if (fittedSpread !== undefined) rest.drainSpread = fittedSpread;
  // A connect backend decides who may connect, as tokens do: such a server is not open.
  const backendAuth = config.proxy?.connect !== undefined;
  const host =
    config.host ?? (auth.tokensOn || backendAuth ? STANDALONE_DEFAULTS.host : STANDALONE_DEFAULTS.openHost);
  const logger = loggerFor(config, isTTY);
  const logsJson =
    config.logger === undefined &&
    typeof logger === 'object' &&
    !('transport' in logger) &&
    logger.level !== 'silent';
  const options: CreateServerOptions = {
    ...(rest as CreateServerOptions),
    host,
    port: config.port ?? STANDALONE_DEFAULTS.port,
    allowedOrigins,
    ...(authOption !== undefined ? { auth: authOption } : {}),
    logger,
    ...(config.tls !== undefined && config.https === undefined ? { https: readTls(config.tls) } : {}),
  };
  // With TLS, HTTP/2 unless turned off: the HTTP transports then share one connection per browser.
  options.http2 = config.http2 ?? options.https !== undefined;
  if (config.authenticate !== undefined) options.authenticate = config.authenticate;
  if (config.canSubscribe !== undefined) options.canSubscribe = config.canSubscribe;
  if (config.canPublish !== undefined) options.canPublish = config.canPublish;
  const admin = adminOf(config.admin);
  if (admin !== null && admin.password === undefined && !isLoopback(host))
    throw configError(ADMIN_NEEDS_PASSWORD);
  const server = await createServer(options);
  try {
    if (admin !== null)
      await server.app.register(adminConsole, {
        ...(admin.password !== undefined ? { password: admin.password } : {}),
        path: config.path ?? defaultOptions.path,
      });
    await server.app.register(publishApi, {
      ...(config.publishApi ?? {}),
      ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
      publish: (channel: string, data: unknown, traceparent?: string) =>
        server.bayou.publish(channel, data, traceparent === undefined ? undefined : { traceparent }),
      maxMessageBytes:
        config.publishApi?.maxMessageBytes ?? options.maxPayloadBytes ?? defaultOptions.maxPayloadBytes,
      maxBatchMessages:
        config.publishApi?.maxBatchMessages ?? options.maxBatchMessages ?? defaultOptions.maxBatchMessages,
    });
    // The server API shares the publish API's key: one secret for the backend.
    await server.app.register(serverApi, config.apiKey !== undefined ? { apiKey: config.apiKey } : {});
  } catch (err) {
    await server.close();
    throw err;
  }
  const shutdownTimeout = config.shutdownTimeout ?? STANDALONE_DEFAULTS.shutdownTimeout;
  const posture = backendAuth
    ? `handshakes decided by the connect backend${auth.tokensOn ? ' after the token check' : ''}; publish API ${config.apiKey ? 'on' : 'off'}`
    : auth.tokensOn
      ? `tokens required${authOption?.allowAnonymous ? ' (anonymous sessions allowed)' : ''}; publish API ${config.apiKey ? 'on' : 'off'}`
      : `OPEN server: no tokens, anyone who reaches ${host} may subscribe and publish${isLoopback(host) ? ' (listening on localhost only)' : ''}; publish API ${config.apiKey ? 'on' : 'off'}`;
  return { server, auth, host, posture, shutdownTimeout, logsJson };
}
