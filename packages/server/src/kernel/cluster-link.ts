/**
 * This node's place in the cluster, as the kernel, the publisher and the transports see
 * it: which node owns a clientId, whether it is alive, forwarding a batch to it, and the
 * per-node inbox channels that carry direct deliveries and control requests.
 */
import { type Engine, type MaybePromise, NODE_INBOX_PREFIX } from '../engine/engine.js';
import { ownerOf } from '../session/session-registry.js';
import type { ForwardRequest, ForwardResponse, NodeLink } from './node-link.js';

export class ClusterLink {
  /** The broker channel that carries direct deliveries to this node's sessions. */
  readonly inbox: string;

  constructor(
    readonly nodeId: string,
    private readonly engine: Pick<Engine, 'directory' | 'ready'>,
    /** Reached through a closure: the link is built with the node's operations. */
    private readonly link: () => NodeLink,
  ) {
    this.inbox = inboxOf(nodeId);
  }

  /** The node owning a clientId when it is not this one (a long-poll to forward there). */
  ownedElsewhere(clientId: unknown): string | null {
    if (typeof clientId !== 'string') return null;
    const owner = ownerOf(clientId);
    return owner !== null && owner !== this.nodeId ? owner : null;
  }

  /** Whether that node is alive (its sessions can be reached by forwarding). */
  isAlive(nodeId: string): MaybePromise<boolean> {
    return this.engine.directory.isAlive(nodeId);
  }

  /** Hands a long-poll batch to its session's owner over the node-to-node layer. */
  forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse> {
    return this.link().forward(nodeId, request);
  }

  /** Whether the engine can serve now (Redis reachable): a forward that failed without it says nothing of the owner. */
  engineReady(): boolean {
    return this.engine.ready();
  }
}

/** The inbox channel of `nodeId`. */
export function inboxOf(nodeId: string): string {
  return `${NODE_INBOX_PREFIX}${nodeId}`;
}
