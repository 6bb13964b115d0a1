/**
 * What the console asks of the server, as `/service/bayou/admin/*` calls of an admin
 * session (the feed's extension refuses everyone else): publish a message, end a user's
 * or a session's sessions, and read a channel's recent history and presence.
 */
import { parseChannel } from '@bayou/protocol';
import type { BayouApp } from '../bayou-app.js';
import { BayeuxReplyError } from '../errors.js';
import type { ServiceHandler } from '../kernel/events.js';
import type { Target } from '../kernel/node-link.js';
import type { NodeOperations } from '../kernel/node-operations.js';

/** Messages of a channel's history the console shows. */
export const INSPECT_HISTORY = 20;

type Handler = ServiceHandler<BayouApp>;

/** Bad input answered as a Bayeux error the console shows (`400::<what to fix>`). */
const bad = (message: string) => new BayeuxReplyError(`400::${message}`);

function fields(data: unknown): Record<string, unknown> {
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw bad('send an object, e.g. { "channel": "/chat/room1" }');
  return data as Record<string, unknown>;
}

function channelOf(value: unknown): string {
  const info = typeof value === 'string' ? parseChannel(value) : null;
  if (info === null || info.kind !== 'broadcast' || info.wildcard !== null)
    throw bad(`"${String(value).slice(0, 200)}" is not a broadcast channel like /chat/room1`);
  return value as string;
}

function targetOf(data: Record<string, unknown>): Target {
  const { user, clientId } = data;
  if (typeof clientId === 'string' && clientId !== '') return { clientId };
  if (typeof user === 'string' && user !== '') return { user };
  throw bad('give a "clientId" or a "user"');
}

async function history(k: NodeOperations, channel: string): Promise<{ data: unknown; position: unknown }[]> {
  const latest = await k.engine.history.latest(channel);
  const kept = Math.min(INSPECT_HISTORY, k.historyFor(channel).size);
  if (kept === 0 || latest.offset === 0) return [];
  const r = await k.engine.history.since(channel, {
    offset: Math.max(0, latest.offset - kept),
    epoch: latest.epoch,
  });
  if (!r.recovered) return [];
  return r.publications.map((p) => ({
    data: (JSON.parse(p.payload) as { data: unknown }).data,
    position: p.position,
  }));
}

export function adminServices(
  app: BayouApp,
  ops: NodeOperations,
  disconnect: (target: Target) => Promise<number>,
): [string, Handler][] {
  return [
    [
      'publish',
      async (data) => {
        const f = fields(data);
        const channel = channelOf(f.channel);
        if (ops.isRecordSubject(channel)) throw bad(`${channel} is a record subject`);
        const position = await app.publish(channel, f.data);
        return { published: true, position };
      },
    ],
    ['disconnect', async (data) => ({ disconnected: await disconnect(targetOf(fields(data))) })],
    [
      'inspect',
      async (data) => {
        const channel = channelOf(fields(data).channel);
        const presence = ops.presence.covers(channel) ? await ops.presence.members(channel) : null;
        return { channel, history: await history(ops, channel), presence };
      },
    ],
  ];
}
