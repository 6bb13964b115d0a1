/**
 * This node's place in the cluster, as the kernel, the publisher and the transports see
 * it: which node owns a clientId, whether it is alive, forwarding a batch to it, and the
 * per-node inbox channels that carry direct deliveries and control requests.
 */
import { type Engine, type HistoryPolicy, type MaybePromise, NODE_INBOX_PREFIX } from '../engine/engine.js';
import type { CarrierKind } from '../session/carrier.js';
import { ownerOf } from '../session/session-registry.js';
import type { ForwardRequest, ForwardResponse, NodeLink } from './node-link.js';
import type { Located, SessionHandovers } from './session-handover.js';

const NO_HISTORY: HistoryPolicy = { size: 0, ttlMs: 0 };

/**
 * A direct message on a node's inbox: the message itself (engines without handovers), or,
 * with them, a ring: the session's mail in the engine has something for it (`takeMail`).
 */
export type DirectMessage =
  | { readonly to: string; readonly message: string }
  | { readonly to: string; readonly ring: true };

export class ClusterLink {
  /** The broker channel that carries direct deliveries to this node's sessions. */
  readonly inbox: string;

  constructor(
    readonly nodeId: string,
    private readonly engine: Pick<Engine, 'directory' | 'ready' | 'broker'>,
    /** Reached through a closure: the link is built with the node's operations. */
    private readonly link: () => NodeLink,
    /** Whether a session of that clientId lives here (one adopted from another node does). */
    private readonly local: (clientId: string) => boolean = () => false,
    /** Sessions handed over at drains, reached through a closure (built with the sessions). */
    private readonly handovers: () => SessionHandovers | null = () => null,
  ) {
    this.inbox = inboxOf(nodeId);
  }

  /** The node owning a clientId when it is not this one (a long-poll to forward there). */
  ownedElsewhere(clientId: unknown): string | null {
    if (typeof clientId !== 'string') return null;
    const owner = ownerOf(clientId);
    return owner !== null && owner !== this.nodeId && !this.local(clientId) ? owner : null;
  }

  /**
   * A session whose node is gone or handed it over: `here` once adopted here (or unknown
   * anywhere), or the node that adopted it. Always `here` without handovers.
   */
  locate(clientId: unknown, kind: CarrierKind): MaybePromise<Located> {
    return this.handovers()?.locate(clientId, kind) ?? 'here';
  }

  /**
   * Sends a direct message (`{channel, data}` JSON) towards `clientId`, a session not on
   * this node. Without handovers, to the inbox of the node its clientId names. With them,
   * it goes into the session's mail in the engine (`SessionHandover.route`), and the node
   * holding the session is rung to take it: its adopter when it moved at a drain, else the
   * node its clientId names; while its record waits to be claimed, the claim takes the mail.
   * Whichever way a drain races it, the message is taken once. `false` when no live node is
   * known to have the session.
   */
  sendDirect(clientId: string, message: string): MaybePromise<boolean> {
    const handovers = this.handovers();
    if (handovers === null) return this.toNamedOwner(clientId, { to: clientId, message });
    return handovers.route(clientId, message).then((route) => {
      if (route === 'kept') return true;
      // The adopter (this node too: the ring reaches it once the adoption under way ends).
      if (route !== null) return this.toInbox(route.owner, { to: clientId, ring: true });
      return this.toNamedOwner(clientId, { to: clientId, ring: true });
    });
  }

  /** To the node `clientId` names, when that is another live node (`false` otherwise: nobody has it). */
  private toNamedOwner(clientId: string, direct: DirectMessage): MaybePromise<boolean> {
    const owner = this.ownedElsewhere(clientId);
    if (owner === null) return false;
    const alive = this.engine.directory.isAlive(owner);
    if (alive === true) return this.toInbox(owner, direct);
    if (alive === false) return false;
    return alive.then((up) => (up ? this.toInbox(owner, direct) : false));
  }

  /** Takes the mail of a session of this node (it was rung). */
  takeMail(clientId: string): Promise<string[]> {
    return this.handovers()?.takeMail(clientId) ?? Promise.resolve([]);
  }

  /**
   * The claim of `clientId` under way on this node, if any: the engine names this node its
   * adopter as soon as the claim ran there, which a direct message sent here may beat.
   */
  adopting(clientId: string): Promise<unknown> | undefined {
    return this.handovers()?.adopting(clientId);
  }

  private toInbox(nodeId: string, direct: DirectMessage): MaybePromise<boolean> {
    const sent = this.engine.broker.publish(inboxOf(nodeId), JSON.stringify(direct), NO_HISTORY);
    return sent instanceof Promise ? sent.then(() => true) : true;
  }

  /** Whether this node handed that session over (a forwarded batch for it is answered `MOVED`). */
  handedOver(clientId: unknown): boolean {
    return this.handovers()?.handedOver(clientId) === true;
  }

  /** Whether that node is alive (its sessions can be reached by forwarding). */
  isAlive(nodeId: string): MaybePromise<boolean> {
    return this.engine.directory.isAlive(nodeId);
  }

  /** Hands a long-poll batch to its session's owner over the node-to-node layer. */
  forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse> {
    return this.link().forward(nodeId, request);
  }

  /** Asks `nodeId` to answer the held long-poll of `clientId` now (this node, relaying it, shuts down). */
  release(nodeId: string, clientId: string): Promise<unknown> {
    return this.link().ask(nodeId, { op: 'release', clientId });
  }

  /** Gives `nodeId` deliveries for its session `clientId` back (their client went away before the answer). */
  requeue(nodeId: string, clientId: string, messages: string[]): Promise<unknown> {
    return this.link().ask(nodeId, { op: 'requeue', clientId, messages });
  }

  /** Asks `nodeId` to hand the session of `clientId` over now (a WebSocket for it opened here). */
  takeOver(nodeId: string, clientId: string): Promise<unknown> {
    return this.link().ask(nodeId, { op: 'handover', clientId });
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
