/**
 * The configuration of a standalone server (`bayou start`), as a config file exports it:
 *
 * ```js
 * // bayou.config.mjs
 * import { defineConfig } from '@bayou/server';
 * export default defineConfig({ port: 8080, tokens: { secret: process.env.JWT_SECRET } });
 * ```
 *
 * Every `createServer` option is accepted, plus the keys below. Flags and environment
 * variables override the file (see `flags.ts`). `tokens`, `channels` and `allowAnonymous`
 * are the plugin's `auth` option spelled at the top level, as the flags set them; a file may
 * give `auth: { tokens, channels, allowAnonymous }` instead, and the top-level keys win over
 * its fields (`authOf` in `build-server.ts`).
 */

import type { ChannelPermissions } from '../auth/channel-rules.js';
import type { TokenOptions } from '../auth/token-verifier.js';
import type { CreateServerOptions } from '../create-server.js';
import type { PublishApiOptions } from '../http/publish-api.js';
import type { AuthenticateHook, ChannelHook } from '../options.js';

export type LogFormat = 'auto' | 'pretty' | 'json';

export interface BayouConfig extends CreateServerOptions {
  /** PEM files to serve https and wss (`--tls-key`, `--tls-cert`). Default: plain http. */
  tls?: { key: string; cert: string };
  /** Verify a JWT at every handshake (`--jwt-secret`, `--jwks-url`). Default: no tokens. */
  tokens?: TokenOptions;
  /** Channel permission rules. Default: see `ChannelPermissions` (depends on `tokens`). */
  channels?: ChannelPermissions;
  /** With tokens on, let handshakes without a token in as anonymous sessions. Default `false`. */
  allowAnonymous?: boolean;
  /** Key(s) of `POST /api/publish` (`--api-key`). Default: none, the API answers 404. */
  apiKey?: string | string[];
  /** Path and sizes of the publish API. Defaults: see `PublishApiOptions`. */
  publishApi?: Omit<PublishApiOptions, 'apiKey' | 'publish'>;
  /**
   * Worker processes (`node:cluster`) sharing the port, each a node of the cluster on
   * `redis` (`--workers`); more than 1 needs `redis`. Default `1` (one process).
   */
  workers?: number;
  /** ms a graceful shutdown may take before the process exits anyway. Default `10000`. */
  shutdownTimeout?: number;
  /** pino level. Default `'info'`. */
  logLevel?: string;
  /** `'pretty'` on a terminal and `'json'` otherwise when `'auto'`. Default `'auto'`. */
  logFormat?: LogFormat;
  /**
   * The operator's console at `/admin` (`--admin`, `--admin-password`). Default off; on,
   * it needs a password unless the server listens on loopback only.
   */
  admin?: { enabled?: boolean; password?: string };
  authenticate?: AuthenticateHook;
  canSubscribe?: ChannelHook;
  canPublish?: ChannelHook;
}

/** Returns its argument: it only gives a config file's object its type. */
export function defineConfig(config: BayouConfig): BayouConfig {
  return config;
}
