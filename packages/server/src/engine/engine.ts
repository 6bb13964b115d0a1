/**
 * The Engine contract: the only thing that differs between one process and a cluster.
 * A node (one Bayou kernel) talks to the rest of the cluster through five parts:
 *
 * - `broker`    carries publications to every node with interest, and assigns positions;
 * - `history`   serves what a channel carried after a position, or says it cannot;
 * - `presence`  counts subscribers cluster-wide and keeps member lists;
 * - `directory` knows which nodes are alive;
 * - `leases`    lets exactly one node hold a named lease (one record provider per subject).
 *
 * Nodes ask each other (a long-poll batch for a session's owner, the server API's and the
 * console's operations) through the node-to-node layer above the broker
 * (`kernel/node-link.ts`), over each node's inbox channel: no engine forwards anything.
 *
 * Every call is async and fallible: a rejected promise is an operational failure (Redis
 * down) that the kernel turns into a Bayeux error reply, never a silent success. Calls
 * typed `MaybePromise` may complete synchronously (the memory engine does), so a
 * single-node publish costs no promise on the hot path; callers must accept both.
 */

export type MaybePromise<T> = T | Promise<T>;

/**
 * Where a message sits in its channel's history: `offset` is 1 for the first message of
 * an epoch and +1 per message (0 means "nothing yet"); `epoch` changes whenever the
 * channel's history is lost (restart, flush, expiry of its meta).
 */
export type { StreamPosition } from '@bayou/protocol';

import type { StreamPosition } from '@bayou/protocol';

/** How much history a channel keeps; `size: 0` keeps none (and assigns no position). */
export interface HistoryPolicy {
  /** Most messages kept per channel. */
  readonly size: number;
  /** Milliseconds a message stays recoverable. */
  readonly ttlMs: number;
}

/** A message as the broker carries it. */
export interface Publication {
  readonly channel: string;
  /**
   * The serialized Bayeux message, `{"channel":…,"data":…}` for a broadcast; for a record
   * update (`record: true`) the serialized map of changed fields.
   */
  readonly payload: string;
  /** Its position in the channel's history; `null` when the channel keeps none. */
  readonly position: StreamPosition | null;
  /** Set for record updates (field deltas merged into the subject's image). */
  readonly record?: true;
  /**
   * The W3C `traceparent` of a traced publish (its engine span), carried to every node's
   * `deliver`; absent for an untraced one, and not kept in history. Past the node's
   * `deliver` (in the subscription index, for extensions) it is set only when `payload`
   * ends with `,"ext":{"traceparent":"…"}}` (the delivery span's), so an extension adding
   * to `ext` merges into it.
   */
  readonly trace?: string;
}

export type Recovery =
  | {
      readonly recovered: true;
      /** What came after the asked position, oldest first. */
      readonly publications: readonly Publication[];
      /** The channel's latest position. */
      readonly position: StreamPosition;
    }
  | { readonly recovered: false; readonly position: StreamPosition };

/**
 * Broker channels named after nodes (`/~node/<id>`) carry direct deliveries and control
 * requests; clients cannot subscribe to them, and they are no channel a session follows.
 */
export const NODE_INBOX_PREFIX = '/~node/';

/** What the engine calls on its node; implemented by the kernel. */
export interface EngineNode {
  /** This node's id, carried in every clientId it issues. */
  readonly nodeId: string;
  /**
   * A publication on a channel this node has interest in (exactly, or through a wildcard
   * name it subscribed): called once per publication per node, in publish order per channel.
   */
  deliver(publication: Publication): void;
  /**
   * Members of a node found dead: called on exactly one live node of the cluster (the one
   * whose liveness sweep noticed), once per dead node, after they were removed.
   */
  membersLost?(lost: readonly LostMember[]): void;
  /**
   * This node was taken for dead by the others (a stall past the liveness bound: its
   * members were reported lost) and is back: these, its members, were written again.
   */
  membersRestored?(members: readonly LostMember[]): void;
  /**
   * The engine lost its backend (Redis went away) or has it back: called once per change,
   * for the log. Whether the engine can serve is `Engine.ready()`.
   */
  connectionChanged?(change: EngineConnectionChange): void;
  /**
   * The engine may have dropped publications for these names (channels and wildcard
   * patterns this node subscribed) and could not recover them from history: its connection
   * for deliveries was silent or lost, and the channel keeps no history or the node had no
   * position on it. Called in delivery order: after what was recovered, before what arrived
   * later. The node tells the subscribers that can hear it (replay's gap notice).
   */
  missed?(names: readonly string[]): void;
  /** A change in how the engine serves this node, for the log (e.g. delivery probes failing). */
  notice?(level: 'warn' | 'info', message: string): void;
}

export interface EngineConnectionChange {
  /** Whether the engine can reach its backend again (`true`) or lost it (`false`). */
  readonly up: boolean;
  /** Where the backend is, without a password: `redis://127.0.0.1:6379`. */
  readonly where: string;
  /** Why it was lost (the connection's last error), when `up` is `false`. */
  readonly reason?: string;
}

export interface Broker {
  /**
   * Publishes `payload` on `channel` to every node with interest; resolves with the
   * message's position (or `null` without history) once the engine has it. `trace`, when
   * given, reaches every node's `deliver` as `Publication.trace` (a traced publish only).
   */
  publish(
    channel: string,
    payload: string,
    history: HistoryPolicy,
    trace?: string,
  ): MaybePromise<StreamPosition | null>;
  /**
   * Merges `fields` (a serialized object) into the image of record `subject` and delivers
   * them to every node with interest as a `record` publication.
   */
  publishRecord(subject: string, fields: string): MaybePromise<void>;
  /** The current image of record `subject`, or `null`. */
  recordImage(subject: string): Promise<Record<string, unknown> | null>;
  /** Forgets the image of `subject` (its provider let it go). */
  dropRecord(subject: string): Promise<void>;
  /** This node now needs `name` (a channel or a wildcard name such as `/a/*`, `/a/**`). */
  subscribe(name: string): MaybePromise<void>;
  /** This node no longer needs `name`. */
  unsubscribe(name: string): MaybePromise<void>;
}

export interface History {
  /** What `channel` carried after `position`, or that it cannot be recovered. */
  since(channel: string, position: StreamPosition): Promise<Recovery>;
  /** The channel's latest position (offset 0 in a fresh epoch when it has none yet). */
  latest(channel: string): Promise<StreamPosition>;
}

export interface PresenceMember {
  readonly clientId: string;
  /** Who the member is (a token's `sub`), when known. */
  readonly user?: string;
  readonly info?: Readonly<Record<string, unknown>>;
}

/** A member of `channel` whose node died. */
export interface LostMember {
  readonly channel: string;
  readonly member: PresenceMember;
}

export interface Presence {
  /**
   * Sets this node's subscriber count for `channel` (0 removes it) and resolves with the
   * cluster-wide total. Counts of a node that dies expire with it.
   */
  setCount(channel: string, count: number): Promise<number>;
  /** The cluster-wide subscriber count of `channel`. */
  count(channel: string): Promise<number>;
  /** Adds a member with its info to `channel`'s list; it expires with its node. */
  join(channel: string, member: PresenceMember): Promise<void>;
  leave(channel: string, clientId: string): Promise<void>;
  members(channel: string): Promise<PresenceMember[]>;
  /**
   * This node has subscribers of `channel` now; resolves `true` when no other node had any,
   * that is when the channel became occupied cluster-wide. Of nodes racing, exactly one
   * sees `true`; a channel held by a dead node stays occupied until `vacateDead` frees it.
   */
  occupy(channel: string): Promise<boolean>;
  /** This node has no subscribers of `channel` any more; `true` when it was the last node. */
  vacate(channel: string): Promise<boolean>;
  /**
   * Frees the channels dead nodes occupied; resolves with those this call vacated (each
   * vacated channel is reported by one caller only, whichever nodes sweep at once).
   */
  vacateDead(): Promise<string[]>;
  /**
   * After this node was taken for dead (no heartbeat for the node TTL: a stall) and its
   * channels vacated by another node's `vacateDead`, occupies them again; resolves with
   * those it made occupied. Nothing to do otherwise.
   */
  reclaim(): Promise<string[]>;
}

export interface SessionDirectory {
  /** Whether `nodeId` is a live node of the cluster. */
  isAlive(nodeId: string): MaybePromise<boolean>;
  /** The ids of the live nodes. */
  nodes(): Promise<string[]>;
}

/**
 * Sessions handed over by a draining node (issue #35): a serialized session record kept
 * for a while under its clientId, claimed by exactly one node, and which node adopted it.
 */
export interface SessionHandover {
  /** Keeps `record` for `clientId` for `ttlMs` (a draining node, for another to adopt). */
  put(clientId: string, record: string, ttlMs: number): Promise<void>;
  /**
   * Claims the record of `clientId` for this node, in one atomic step: `{ record }` when it
   * was there (no other node can claim it again; this node is now its adopter, for
   * `ownerTtlMs`), `{ owner }` when another node adopted it before, `null` for neither.
   */
  claim(clientId: string, ownerTtlMs: number): Promise<HandoverClaim | { owner: string } | null>;
  /**
   * A direct message for `clientId`, a session not on this node, in one atomic step: added
   * to the session's mail (kept `ttlMs`, or as long as its record), then where to ring for
   * it — `'kept'` when a record waits to be claimed (the claim takes the mail with it,
   * `HandoverClaim.mail`), `{ owner }` when a node adopted it, `null` otherwise (its named
   * node has it, or nobody). The node holding the session takes the mail (`takeMail`).
   */
  route(clientId: string, message: string, ttlMs: number): Promise<'kept' | { owner: string } | null>;
  /** Takes the mail of `clientId` (the messages `route` added), in order, in one atomic step. */
  takeMail(clientId: string): Promise<string[]>;
  /** The node that adopted the session of `clientId`, or `null` (never handed over, waiting, or ended). */
  adopter(clientId: string): Promise<string | null>;
  /** The adopted session ended on this node: forget that this node adopted it. */
  release(clientId: string): Promise<void>;
}

/** A record claimed, with the direct messages sent to its session while it waited. */
export interface HandoverClaim {
  readonly record: string;
  readonly mail: readonly string[];
}

export interface Leases {
  /** Takes the lease `name` for this node for `ttlMs`; `false` when another node holds it. */
  acquire(name: string, ttlMs: number): Promise<boolean>;
  /** Extends a lease this node holds; `false` when it lost it. */
  renew(name: string, ttlMs: number): Promise<boolean>;
  /** Lets go of a lease this node holds (no effect otherwise). */
  release(name: string): Promise<void>;
}

/** What an engine that keeps history in this process reports about it, for metrics. */
export interface HistoryStats {
  /** Channels whose history is kept now. */
  readonly channels: number;
  /** Channel histories dropped after being idle for their time-to-live (a running total). */
  readonly expired: number;
  /** Channel histories dropped to stay within the channel cap (a running total). */
  readonly evicted: number;
}

/**
 * What an engine declares about itself, asked instead of its class: the plugin and the
 * console decide by these, so an engine of its own (or memory engines sharing one
 * `MemoryBus`) gets the behaviour its shape calls for.
 */
export interface EngineCapabilities {
  /**
   * Other nodes may share this engine (Redis; memory engines on one shared `MemoryBus`): a
   * balancer may send one session's requests to different nodes, so long-polling delivers
   * in connect replies only (`OrderedLongPolling`).
   */
  readonly multiNode: boolean;
  /**
   * Where the engine's backend is, without a password (`redis://127.0.0.1:6379`), for a
   * failure to start that names it; `null` for an engine with no backend (in process).
   */
  readonly backend: string | null;
}

/** How the engine's connection to its backend fared, for the console. */
export interface EngineConnectionStats {
  /** Times it reconnected to its backend. */
  readonly reconnects: number;
}

export interface Engine {
  /** What this engine is, as the node asks it (never by its class). */
  readonly capabilities: EngineCapabilities;
  readonly broker: Broker;
  readonly history: History;
  readonly presence: Presence;
  readonly directory: SessionDirectory;
  /** Sessions handed over between nodes; absent on an engine that keeps none (one node). */
  readonly handover?: SessionHandover;
  readonly leases: Leases;
  /**
   * How many channels keep history here, and how many were dropped; only an engine that
   * holds history in this process has it (the memory engine; Redis bounds its own keys).
   */
  historyStats?(): HistoryStats;
  /** Its connection's figures, for an engine with a backend (Redis); absent in process. */
  connectionStats?(): EngineConnectionStats;
  /** Joins the cluster as `node`. */
  start(node: EngineNode): Promise<void>;
  /** Whether the engine can serve now (its backend reachable). */
  ready(): boolean;
  /** Leaves the cluster: its counts, members and leases go with it. */
  close(): Promise<void>;
}
