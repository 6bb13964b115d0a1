/**
 * The shared state behind memory engines: one per process by default, or one shared by
 * several kernels in a process to run a cluster in-process (the contract suite's
 * three-node scenario). It plays the part Redis plays for the Redis engine.
 */
import { expandChannel } from '@bayou/protocol';
import type { EngineNode, PresenceMember, Publication } from '../engine.js';
import { MemoryStream } from './memory-stream.js';

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
  readonly streams = new Map<string, MemoryStream>();
  /** channel → nodeId → that node's subscriber count. */
  readonly counts = new Map<string, Map<string, number>>();
  /** channel → clientId → member and the node it lives on. */
  readonly presence = new Map<string, Map<string, { member: PresenceMember; nodeId: string }>>();
  readonly leases = new Map<string, Lease>();
  readonly images = new Map<string, Record<string, unknown>>();

  stream(channel: string): MemoryStream {
    let stream = this.streams.get(channel);
    if (stream === undefined) {
      stream = new MemoryStream(channel);
      this.streams.set(channel, stream);
    }
    return stream;
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
    for (const [channel, byNode] of this.counts) {
      byNode.delete(nodeId);
      if (byNode.size === 0) this.counts.delete(channel);
    }
    for (const [channel, byClient] of this.presence) {
      for (const [clientId, entry] of byClient) if (entry.nodeId === nodeId) byClient.delete(clientId);
      if (byClient.size === 0) this.presence.delete(channel);
    }
    for (const [name, lease] of this.leases) if (lease.owner === nodeId) this.leases.delete(name);
  }
}
