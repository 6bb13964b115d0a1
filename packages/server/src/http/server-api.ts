/**
 * The server API for backends (any language): read presence, history, channels and the
 * cluster's nodes; end or unsubscribe a user's sessions on every node. Same bearer key as
 * `POST /api/publish` (no key configured: every route answers 404). Cluster-wide: a node
 * asks the others through `NodeLink` (the engine's per-node inbox).
 *
 * - `GET  /api/presence?channel=`      → `{ channel, members: [{ clientId, user, info }] }`
 * - `GET  /api/history?channel=&limit=` → `{ channel, position, recovered, messages: [{ data, position }] }`
 * - `GET  /api/channels?limit=`         → `{ channels: [{ channel, subscribers }], nodes, unanswered }`
 * - `POST /api/disconnect { user | clientId }`            → `{ disconnected }`
 * - `POST /api/unsubscribe { user | clientId, channel }`  → `{ unsubscribed }`
 * - `GET  /api/info`                    → `{ version, uptime, nodes: [{ nodeId, sessions, uptime }], sessions }`
 *
 * Bad input is a `400 { error }` naming what to fix; an unreachable engine a `503`.
 */
import { readFileSync } from 'node:fs';
import { parseChannel } from '@bayou/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Answer, NodeInfo, Target } from '../kernel/node-link.js';
import { type NodeOperations, operationsOf } from '../kernel/node-operations.js';
import { ownerOf } from '../session/session-registry.js';
import { apiKeyDigests, requireBearerKey } from './publish-api.js';

export interface ServerApiOptions {
  /** The key (or keys) a caller must present: the publish API's. Unset: every route answers 404. */
  apiKey?: string | readonly string[];
  /** Most messages `GET /api/history` returns. Default `1000`. */
  maxHistory?: number;
  /** Most channels `GET /api/channels` lists (the busiest first). Default `1000`. */
  maxChannels?: number;
}

class BadInput extends Error {
  readonly statusCode = 400;
}

function version(): string {
  try {
    const url = new URL('../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** A concrete broadcast channel from the query or body, or a 400. */
function channelParam(value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new BadInput('"channel" is required, e.g. /chat/room1');
  const info = parseChannel(value);
  if (info === null || info.kind !== 'broadcast' || info.wildcard !== null)
    throw new BadInput(
      `"${value.slice(0, 200)}" is not a broadcast channel (no wildcards, not /meta or /service)`,
    );
  return value;
}

function limitParam(value: unknown, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    throw new BadInput(`"limit" must be a whole number from 1 to ${max}`);
  return n;
}

/** Exactly one of `user` and `clientId`, non-empty strings. */
function targetParam(body: Record<string, unknown>): Target {
  const { user, clientId } = body;
  if ((user === undefined) === (clientId === undefined))
    throw new BadInput('give exactly one of "user" (a token\'s sub) and "clientId"');
  if (user !== undefined) {
    if (typeof user !== 'string' || user === '') throw new BadInput('"user" must be a non-empty string');
    return { user };
  }
  if (typeof clientId !== 'string' || clientId === '')
    throw new BadInput('"clientId" must be a non-empty string');
  return { clientId };
}

function bodyOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new BadInput('send a JSON object body (Content-Type: application/json)');
  return body as Record<string, unknown>;
}

/**
 * Runs a targeted operation where its sessions live: the node holding a clientId (the one
 * that adopted it when it was handed over at a drain, else the one it names), else every node.
 */
export async function onTargets(
  k: NodeOperations,
  target: Target,
  run: (nodeId: string) => Promise<number>,
): Promise<number> {
  if ('clientId' in target) {
    const adopter = await k.engine.handover?.adopter(target.clientId);
    const owner = adopter ?? ownerOf(target.clientId);
    if (owner === null) return 0;
    if (!(await k.engine.directory.isAlive(owner))) return 0;
    return run(owner);
  }
  const nodes = await k.engine.directory.nodes();
  const counts = await Promise.all(nodes.map((n) => run(n).catch(() => 0)));
  return counts.reduce((a, b) => a + b, 0);
}

/** `GET /api/history`: the last `limit` messages the channel's history still holds. */
async function historyReply(
  k: NodeOperations,
  query: Record<string, unknown>,
  maxHistory: number,
): Promise<unknown> {
  const channel = channelParam(query.channel);
  const limit = limitParam(query.limit, maxHistory, 100);
  const latest = await k.engine.history.latest(channel);
  const kept = Math.min(limit, k.historyFor(channel).size);
  const from = { offset: Math.max(0, latest.offset - kept), epoch: latest.epoch };
  const r = kept === 0 || latest.offset === 0 ? null : await k.engine.history.since(channel, from);
  const messages =
    r?.recovered === true
      ? r.publications.map((p) => ({
          data: (JSON.parse(p.payload) as { data: unknown }).data,
          position: p.position,
        }))
      : [];
  return { channel, position: latest, recovered: r === null || r.recovered, messages };
}

/** `GET /api/channels`: the busiest channels over every node that answers. */
async function channelsReply(
  k: NodeOperations,
  query: Record<string, unknown>,
  maxChannels: number,
): Promise<unknown> {
  const limit = limitParam(query.limit, maxChannels, maxChannels);
  const answers = await k.control.askAll<[string, number][]>({ op: 'channels', limit });
  const totals = new Map<string, number>();
  for (const a of answers)
    if ('result' in a) for (const [name, n] of a.result) totals.set(name, (totals.get(name) ?? 0) + n);
  const channels = [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([channel, subscribers]) => ({ channel, subscribers }));
  return { channels, nodes: answers.length, unanswered: unanswered(answers) };
}

export async function serverApi(app: FastifyInstance, options: ServerApiOptions): Promise<void> {
  const keys = apiKeyDigests(options.apiKey);
  const maxHistory = options.maxHistory ?? 1000;
  const maxChannels = options.maxChannels ?? 1000;
  const k = operationsOf(app);
  const started = Date.now();
  const ver = version();

  await app.register(async (scope) => {
    scope.addHook('onRequest', requireBearerKey(keys, 'the server API is off: no API key is configured'));
    scope.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
      const status =
        err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 503;
      if (status === 503) scope.log.warn({ err }, 'server API failed');
      reply
        .code(status)
        .send({ error: status === 503 ? `the cluster could not answer: ${err.message}` : err.message });
    });

    scope.get('/api/presence', async (request) => {
      const channel = channelParam((request.query as Record<string, unknown>).channel);
      if (!k.presence.covers(channel))
        throw new BadInput(
          `no presence is kept for ${channel}: no channel rule with presence: true covers it`,
        );
      return { channel, members: await k.presence.members(channel) };
    });

    scope.get('/api/history', (request) =>
      historyReply(k, request.query as Record<string, unknown>, maxHistory),
    );
    scope.get('/api/channels', (request) =>
      channelsReply(k, request.query as Record<string, unknown>, maxChannels),
    );

    scope.post('/api/disconnect', async (request) => {
      const target = targetParam(bodyOf(request));
      const disconnected = await onTargets(k, target, (nodeId) =>
        k.control.ask<number>(nodeId, { op: 'disconnect', target }),
      );
      return { disconnected };
    });

    scope.post('/api/unsubscribe', async (request) => {
      const body = bodyOf(request);
      const target = targetParam(body);
      const channel = channelParam(body.channel);
      const unsubscribed = await onTargets(k, target, (nodeId) =>
        k.control.ask<number>(nodeId, { op: 'unsubscribe', target, channel }),
      );
      return { unsubscribed };
    });

    scope.get('/api/info', async () => {
      const answers = await k.control.askAll<NodeInfo>({ op: 'info' });
      const nodes = answers.map((a) => ('result' in a ? a.result : { nodeId: a.nodeId, error: a.error }));
      const sessions = answers.reduce((sum, a) => sum + ('result' in a ? a.result.sessions : 0), 0);
      return {
        version: ver,
        nodeId: k.nodeId,
        uptime: Math.round((Date.now() - started) / 1000),
        nodes,
        sessions,
      };
    });
  });
}

function unanswered(answers: Answer<unknown>[]): string[] {
  return answers.filter((a) => 'error' in a).map((a) => a.nodeId);
}
