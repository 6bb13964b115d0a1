/**
 * What the operator's surfaces — the server API (`http/server-api.ts`) and the console
 * (`admin/`) — may do with a node, beyond the application facade: ask other nodes
 * (`NodeLink`), read history and presence, count channels, deliver to one session,
 * and tap the node (`NodeTaps`). The Bayou plugin decorates the Fastify instance with it
 * under `NODE_OPERATIONS`; those plugins read it with `operationsOf(app)`.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Engine, HistoryPolicy, MaybePromise } from '../engine/engine.js';
import { BayouError } from '../errors.js';
import type { AdminOps } from './admin-ops.js';
import type { NodeLink } from './node-link.js';
import type { NodeTaps } from './node-taps.js';
import type { PresenceTracker } from './presence-tracker.js';

export interface NodeOperations {
  readonly nodeId: string;
  readonly log: FastifyBaseLogger;
  /** The engine: its history, its directory of nodes, whether it is ready. */
  readonly engine: Engine;
  readonly control: NodeLink;
  readonly taps: NodeTaps;
  /** This node's side of the control operations (what `control` runs when asked here). */
  readonly admin: Pick<AdminOps, 'run' | 'kicked' | 'rememberedCount'>;
  /** Member lists of the channels presence rules cover. */
  readonly presence: Pick<PresenceTracker, 'covers' | 'members' | 'localChannels'>;
  historyFor(channel: string): HistoryPolicy;
  isRecordSubject(channel: string): boolean;
  deliverTo(clientId: string, channel: string, data: unknown): MaybePromise<boolean>;
  /** This node's channels (and patterns) with their local subscriber counts. */
  channelCounts(): Iterable<[string, number]>;
}

/** The Fastify decoration holding a node's operations (not a public name). */
export const NODE_OPERATIONS = Symbol.for('bayou.node-operations');

/** The operations of the Bayou node registered on `app`; a clear error when there is none. */
export function operationsOf(app: FastifyInstance): NodeOperations {
  const ops = (app as unknown as Record<symbol, NodeOperations | undefined>)[NODE_OPERATIONS];
  if (ops === undefined)
    throw new BayouError(
      'BAYOU_ERR_INVALID_OPTION',
      'register the Bayou plugin (app.register(bayou, …)) before the server API or the console',
    );
  return ops;
}
