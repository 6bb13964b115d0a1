/**
 * The default engine: every part of the contract in process memory. Alone it is a
 * single node; engines built on one shared `MemoryBus` form an in-process cluster.
 */

import { optionProblem } from '../../option-errors.js';
import type {
  Broker,
  Engine,
  EngineCapabilities,
  EngineNode,
  History,
  HistoryPolicy,
  HistoryStats,
  Leases,
  Presence,
  PresenceMember,
  Recovery,
  SessionDirectory,
  StreamPosition,
} from '../engine.js';
import { type BusMember, MemoryBus, type MemoryBusOptions } from './memory-bus.js';

export interface MemoryEngineOptions extends MemoryBusOptions {
  /**
   * Share one bus between engines to run several nodes in one process (the history
   * options then belong to the bus). Default: a private bus.
   */
  bus?: MemoryBus;
}

export class MemoryEngine implements Engine {
  /** Several nodes only on a bus shared between engines; nothing outside the process. */
  readonly capabilities: EngineCapabilities;
  readonly bus: MemoryBus;
  readonly broker: Broker;
  readonly history: History;
  readonly presence: Presence;
  readonly directory: SessionDirectory;
  readonly leases: Leases;
  private self: BusMember | null = null;

  constructor(options: MemoryEngineOptions = {}) {
    const { bus, ...history } = options;
    const given = Object.entries(history).filter(([, v]) => v !== undefined);
    if (bus !== undefined && given.length > 0)
      optionProblem(
        `memory engine options "bus" and "${given.map(([k]) => k).join('", "')}" exclude each other: give those to the shared MemoryBus`,
      );
    this.bus = bus ?? new MemoryBus(history);
    this.capabilities = Object.freeze({ multiNode: bus !== undefined, backend: null });
    this.broker = new MemoryBroker(this);
    this.history = new MemoryHistory(this.bus);
    this.presence = new MemoryPresence(this);
    this.directory = new MemoryDirectory(this.bus);
    this.leases = new MemoryLeases(this);
  }

  async start(node: EngineNode): Promise<void> {
    const self = { node, interest: new Map() };
    this.bus.add(self);
    this.self = self;
  }

  ready(): boolean {
    return this.self !== null;
  }

  historyStats(): HistoryStats {
    return this.bus.history.stats();
  }

  async close(): Promise<void> {
    if (this.self === null) return;
    this.bus.remove(this.self.node.nodeId);
    this.self = null;
  }

  /** This engine's membership; throws when used before `start` or after `close`. */
  member(): BusMember {
    if (this.self === null) throw new Error('memory engine is not started');
    return this.self;
  }
}

class MemoryBroker implements Broker {
  constructor(private readonly engine: MemoryEngine) {}

  publish(channel: string, payload: string, history: HistoryPolicy, trace?: string): StreamPosition | null {
    this.engine.member();
    const bus = this.engine.bus;
    const publication =
      history.size > 0 && history.ttlMs > 0
        ? bus.history.publish(channel, payload, history, Date.now())
        : { channel, payload, position: null };
    // The trace goes to the nodes, not into history.
    bus.dispatch(trace === undefined ? publication : { ...publication, trace });
    return publication.position;
  }

  publishRecord(subject: string, fields: string): void {
    this.engine.member();
    const bus = this.engine.bus;
    const delta = JSON.parse(fields) as Record<string, unknown>;
    const image = bus.images.get(subject);
    if (image === undefined) bus.images.set(subject, { ...delta });
    else Object.assign(image, delta);
    bus.dispatch({ channel: subject, payload: fields, position: null, record: true });
  }

  async recordImage(subject: string): Promise<Record<string, unknown> | null> {
    const image = this.engine.bus.images.get(subject);
    return image === undefined ? null : { ...image };
  }

  async dropRecord(subject: string): Promise<void> {
    this.engine.bus.images.delete(subject);
  }

  subscribe(name: string): void {
    const interest = this.engine.member().interest;
    interest.set(name, (interest.get(name) ?? 0) + 1);
  }

  unsubscribe(name: string): void {
    const interest = this.engine.member().interest;
    const n = (interest.get(name) ?? 0) - 1;
    if (n <= 0) interest.delete(name);
    else interest.set(name, n);
  }
}

class MemoryHistory implements History {
  constructor(private readonly bus: MemoryBus) {}

  async since(channel: string, position: StreamPosition): Promise<Recovery> {
    const now = Date.now();
    return this.bus.history.read(channel, now).since(position, now);
  }

  async latest(channel: string): Promise<StreamPosition> {
    return this.bus.history.read(channel, Date.now()).position;
  }
}

class MemoryPresence implements Presence {
  constructor(private readonly engine: MemoryEngine) {}

  async setCount(channel: string, count: number): Promise<number> {
    const nodeId = this.engine.member().node.nodeId;
    const counts = this.engine.bus.counts;
    let byNode = counts.get(channel);
    if (count > 0) {
      if (byNode === undefined) {
        byNode = new Map();
        counts.set(channel, byNode);
      }
      byNode.set(nodeId, count);
    } else if (byNode !== undefined) {
      byNode.delete(nodeId);
      if (byNode.size === 0) counts.delete(channel);
    }
    return this.count(channel);
  }

  async count(channel: string): Promise<number> {
    let total = 0;
    for (const n of this.engine.bus.counts.get(channel)?.values() ?? []) total += n;
    return total;
  }

  async join(channel: string, member: PresenceMember): Promise<void> {
    const nodeId = this.engine.member().node.nodeId;
    const presence = this.engine.bus.presence;
    let byClient = presence.get(channel);
    if (byClient === undefined) {
      byClient = new Map();
      presence.set(channel, byClient);
    }
    byClient.set(member.clientId, { member, nodeId });
  }

  async leave(channel: string, clientId: string): Promise<void> {
    const byClient = this.engine.bus.presence.get(channel);
    byClient?.delete(clientId);
    if (byClient?.size === 0) this.engine.bus.presence.delete(channel);
  }

  async members(channel: string): Promise<PresenceMember[]> {
    return [...(this.engine.bus.presence.get(channel)?.values() ?? [])].map((e) => e.member);
  }

  async occupy(channel: string): Promise<boolean> {
    const nodeId = this.engine.member().node.nodeId;
    const occupied = this.engine.bus.occupied;
    let nodes = occupied.get(channel);
    if (nodes === undefined) {
      nodes = new Set();
      occupied.set(channel, nodes);
    }
    if (nodes.has(nodeId)) return false;
    nodes.add(nodeId);
    return nodes.size === 1;
  }

  async vacate(channel: string): Promise<boolean> {
    const nodeId = this.engine.member().node.nodeId;
    const nodes = this.engine.bus.occupied.get(channel);
    if (nodes === undefined || !nodes.delete(nodeId)) return false;
    if (nodes.size > 0) return false;
    this.engine.bus.occupied.delete(channel);
    return true;
  }

  /** A node on the bus is never taken for dead while it is on it. */
  async reclaim(): Promise<string[]> {
    return [];
  }

  async vacateDead(): Promise<string[]> {
    this.engine.member();
    return this.engine.bus.orphaned.splice(0);
  }
}

class MemoryDirectory implements SessionDirectory {
  constructor(private readonly bus: MemoryBus) {}

  isAlive(nodeId: string): boolean {
    return this.bus.members.has(nodeId);
  }

  async nodes(): Promise<string[]> {
    return [...this.bus.members.keys()];
  }
}

class MemoryLeases implements Leases {
  constructor(private readonly engine: MemoryEngine) {}

  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const owner = this.engine.member().node.nodeId;
    const now = Date.now();
    const lease = this.engine.bus.leases.get(name);
    if (lease !== undefined && lease.expiresAt > now && lease.owner !== owner) return false;
    this.engine.bus.leases.set(name, { owner, expiresAt: now + ttlMs });
    return true;
  }

  async renew(name: string, ttlMs: number): Promise<boolean> {
    const owner = this.engine.member().node.nodeId;
    const lease = this.engine.bus.leases.get(name);
    if (lease === undefined || lease.owner !== owner || lease.expiresAt <= Date.now()) return false;
    lease.expiresAt = Date.now() + ttlMs;
    return true;
  }

  async release(name: string): Promise<void> {
    const owner = this.engine.member().node.nodeId;
    if (this.engine.bus.leases.get(name)?.owner === owner) this.engine.bus.leases.delete(name);
  }
}
