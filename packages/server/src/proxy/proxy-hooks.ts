/**
 * Proxy hooks: the server's `authenticate`, `canSubscribe` and `canPublish` hooks and a
 * `/service/**` handler, implemented by POSTing to the application's backend (see
 * `proxy-backend.ts` for the verdicts). Each runs after the hooks already in place (tokens,
 * channel rules, the application's own), so a backend can only narrow what they allow.
 *
 * What the backend is sent (JSON):
 * - connect:   { transport, ip, headers, ext }            → result { user?, info?, subscribe?, publish? }
 * - subscribe: { clientId, user, channel, ext }            → result {}
 * - publish:   { clientId, user, channel, data, ext }      → result { data? } (replaces the data)
 * - rpc:       { clientId, user, channel, data, ext }      → result { data } (the answer)
 * A connect's `user` becomes `session.auth.sub` (as a token's would), its `subscribe` /
 * `publish` patterns the session's channel permissions.
 */
import { formatError, type Message } from '@bayou/protocol';
import { covers } from '../auth/channel-rules.js';
import { userOf } from '../auth/user-of.js';
import type { ServiceHandler } from '../kernel/events.js';
import type { AuthenticateHook, ChannelHook } from '../options.js';
import type { ServerSession } from '../session/session.js';
import type { RequestInfo } from '../types.js';
import { ProxyBackend, ProxyHookError, type ProxyStats } from './proxy-backend.js';
import type { ResolvedProxyOptions } from './proxy-options.js';

export interface HookSet {
  authenticate?: AuthenticateHook | undefined;
  canSubscribe?: ChannelHook | undefined;
  canPublish?: ChannelHook | undefined;
}

export interface ProxyHooks extends HookSet {
  /** Serves `/service/**` through the rpc backend, when one is set. */
  rpc: ServiceHandler | undefined;
}

/** Request headers a connect backend may need to recognise the user (the rest stay here). */
const FORWARDED_HEADERS = ['cookie', 'authorization', 'origin', 'user-agent', 'x-forwarded-for'];

function pickHeaders(request: RequestInfo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const v = request.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

function strings(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new ProxyHookError(formatError('backendFailed', ['connect']));
  return v as string[];
}

/** What a connect verdict makes of the session's `auth`. */
function connectAuth(result: Record<string, unknown>): Record<string, unknown> {
  const auth: Record<string, unknown> = {};
  if (result.user !== undefined) {
    if (typeof result.user !== 'string') throw new ProxyHookError(formatError('backendFailed', ['connect']));
    // As a token's `sub`: presence, the server API and channel rules know the user by it.
    auth.sub = result.user;
  }
  if (result.info !== undefined) auth.info = result.info;
  const subscribe = strings(result.subscribe);
  const publish = strings(result.publish);
  if (subscribe !== undefined) auth.subscribe = subscribe;
  if (publish !== undefined) auth.publish = publish;
  return auth;
}

/** Whether the session's channel permissions from its connect (if it got any) allow `channel`. */
function permitted(session: ServerSession, action: 'subscribe' | 'publish', channel: string): boolean {
  const list = session.auth?.[action];
  return !Array.isArray(list) || list.some((p) => typeof p === 'string' && covers(p, channel));
}

function caller(session: ServerSession, message: Message): Record<string, unknown> {
  const user = userOf(session);
  return {
    clientId: session.id,
    ...(user === undefined ? {} : { user }),
    channel: message.channel,
    ...(message.ext === undefined ? {} : { ext: message.ext }),
  };
}

export function createProxyHooks(
  options: ResolvedProxyOptions,
  before: HookSet,
  stats: ProxyStats,
): ProxyHooks {
  const backend = (hook: keyof ResolvedProxyOptions) => {
    const endpoint = options[hook];
    return endpoint === undefined ? null : new ProxyBackend(hook, endpoint, stats);
  };
  const connect = backend('connect');
  const subscribe = backend('subscribe');
  const publish = backend('publish');
  const rpc = backend('rpc');
  const hooks: ProxyHooks = { ...before, rpc: undefined };

  if (connect !== null) {
    const first = before.authenticate;
    hooks.authenticate = async (message, request) => {
      const earlier = first === undefined ? true : await first(message, request);
      if (earlier === false) return false;
      const result = await connect.call({
        transport: request.transport,
        ip: request.ip ?? request.remoteAddress,
        headers: pickHeaders(request),
        ...(message.ext === undefined ? {} : { ext: message.ext }),
      });
      const auth = connectAuth(result);
      // The fields of the hooks before (a verified token's) win, as with the application's hook.
      return earlier !== null && typeof earlier === 'object' ? { ...auth, ...earlier } : auth;
    };
  }

  const channelHook = (
    action: 'subscribe' | 'publish',
    first: ChannelHook | undefined,
    call: ProxyBackend | null,
  ): ChannelHook | undefined => {
    if (call === null && connect === null) return first;
    return async (session, channel, message) => {
      if (first !== undefined && !(await first(session, channel, message))) return false;
      if (!permitted(session, action, channel)) return false;
      if (call === null) return true;
      if (action === 'subscribe') {
        await call.call({ ...caller(session, message), channel });
        return true;
      }
      const result = await call.call({ ...caller(session, message), data: message.data });
      // The backend may rewrite what is published: the publish path reads `data` after this hook.
      if ('data' in result) message.data = result.data;
      return true;
    };
  };
  hooks.canSubscribe = channelHook('subscribe', before.canSubscribe, subscribe);
  hooks.canPublish = channelHook('publish', before.canPublish, publish);

  if (rpc !== null) {
    hooks.rpc = async (data, ctx) => {
      const result = await rpc.call({ ...caller(ctx.session, ctx.message), data });
      return result.data ?? null;
    };
  }
  return hooks;
}
