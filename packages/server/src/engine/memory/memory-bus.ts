/**
 * The shared state behind memory engines: one per process by default, or one shared by
 * several kernels in a process to run a cluster in-process (the contract suite's
 * three-node scenario). It plays the part Redis plays for the Redis engine.
 */
import { expandChannel } from '@bayou/protocol';
import { SERVER_DEFAULTS } from '../../defaults.js';
import { optionProblem, unknownOptions } from '../../option-errors.js';
import type { EngineNode, PresenceMember, Publication } from '../engine.js';
import { StreamTable } from './stream-table.js';

/** How the bus bounds the history it keeps. */
export interface MemoryBusOptions {
  /**
   * Most channels keeping history at once; a new one pushes out the least recently
   * published. Default `100000`.
   */
  historyChannels?: number;
  /**
   * ms the position of a channel that was subscribed to but never published to is kept
   * (a published channel keeps its history for its own TTL). Default `120000`.
   */
  historyTtl?: number;
  /** ms between two sweeps dropping channels idle past their TTL. Default `1000`. */
  sweepInterval?: number;
}

/** The plugin's history bounds (`defaults.ts`). */
const defaults = SERVER_DEFAULTS.memoryEngine;

function resolveBusOptions(input: MemoryBusOptions): Readonly<Required<MemoryBusOptions>> {
  const unknown = Object.keys(input).filter((k) => !(k in defaults));
  if (unknown.length > 0) unknownOptions(`unknown memory engine option(s): ${unknown.join(', ')}`);
  const o = { ...defaults, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
  for (const [name, min] of [
    ['historyChannels', 1],
    ['historyTtl', 0],
    ['sweepInterval', 10],
  ] as const) {
    const v = o[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
      optionProblem(`memory engine option "${name}" must be an integer >= ${min}`);
  }
  return Object.freeze(o);
}

export interface BusMember {
  readonly node: EngineNode;
  /** Channel and wildcard names this node needs, with a reference count. */
  readonly interest: Map<string, number>;
}

export interface Lease {
  owner: string;
  expiresAt: number;
}

export class MemoryBus {
  readonly members = new Map<string, BusMember>();
  /** Channel histories, bounded by TTL and count (see `StreamTable`). */
  readonly history: StreamTable;
  /** channel → nodeId → that node's subscriber count. */
  readonly counts = new Map<string, Map<string, number>>();
  /** channel → clientId → member and the node it lives on. */
  readonly presence = new Map<string, Map<string, { member: PresenceMember; nodeId: string }>>();
  /** channel → the nodes with subscribers of it (channel occupancy). */
  readonly occupied = new Map<string, Set<string>>();
  /** Channels left empty by a node that went without vacating them, for the next `vacateDead`. */
  readonly orphaned: string[] = [];
  readonly leases = new Map<string, Lease>();
  readonly images = new Map<string, Record<string, unknown>>();
  private readonly sweepInterval: number;
  /** One timer for the whole bus, running while it has members. */
  private timer: NodeJS.Timeout | null = null;

  constructor(options: MemoryBusOptions = {}) {
    const o = resolveBusOptions(options);
    this.history = new StreamTable({ maxChannels: o.historyChannels, idleTtlMs: o.historyTtl });
    this.sweepInterval = o.sweepInterval;
  }

  /** A node joins; the first one starts the sweep. */
  add(member: BusMember): void {
    if (this.members.has(member.node.nodeId))
      throw new Error(`node id ${member.node.nodeId} is already on this bus`);
    this.members.set(member.node.nodeId, member);
    if (this.timer === null) {
      this.timer = setInterval(() => this.history.sweep(Date.now()), this.sweepInterval);
      this.timer.unref();
    }
  }

  /** Hands `publication` to every node needing its channel, once each. */
  dispatch(publication: Publication): void {
    const names = expandChannel(publication.channel);
    for (const member of this.members.values()) {
      if (member.interest.size === 0) continue;
      for (const name of names) {
        if (member.interest.has(name)) {
          member.node.deliver(publication);
          break;
        }
      }
    }
  }

  /** A node left: everything it held goes with it. */
  remove(nodeId: string): void {
    this.members.delete(nodeId);
    if (this.members.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    for (const [channel, byNode] of this.counts) {
      byNode.delete(nodeId);
      if (byNode.size === 0) this.counts.delete(channel);
    }
    for (const [channel, byClient] of this.presence) {
      for (const [clientId, entry] of byClient) if (entry.nodeId === nodeId) byClient.delete(clientId);
      if (byClient.size === 0) this.presence.delete(channel);
    }
    for (const [name, lease] of this.leases) if (lease.owner === nodeId) this.leases.delete(name);
    // A node leaves its channels before it goes (its sessions end first); what it still held
    // is reported by the next node that sweeps, as a dead Redis node's would be.
    for (const [channel, nodes] of this.occupied) {
      if (!nodes.delete(nodeId) || nodes.size > 0) continue;
      this.occupied.delete(channel);
      this.orphaned.push(channel);
    }
  }
}
