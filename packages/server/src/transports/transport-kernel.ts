/** What the transports need of the kernel: a batch handler and word of their carriers going away. */
import type { FastifyBaseLogger } from 'fastify';
import type { BatchContext } from '../bayeux/batch-context.js';
import type { MaybePromise } from '../engine/engine.js';
import type { ForwardRequest, ForwardResponse } from '../kernel/node-link.js';
import type { Carrier, CarrierKind } from '../session/carrier.js';
import type { Session } from '../session/session.js';
import type { PendingPoll } from '../session/session-lifecycle.js';

export interface TransportKernel {
  readonly log: FastifyBaseLogger;
  handleBatch(messages: unknown[], ctx: BatchContext, scanForProto: boolean): void | Promise<void>;
  readonly connects: {
    carrierClosed(session: Session, link: Carrier): void;
    pollAborted(session: Session, poll: PendingPoll): void;
    /** A stream opened without a connect (an EventSource request) carries `session` from now on. */
    bindStream(session: Session, link: Carrier): void;
  };
  /** The live sessions of this node: the one a clientId names. */
  readonly sessions: { find(clientId: unknown): Session | undefined };
  readonly outbound: {
    countResponse(messages: number, bytes: number): void;
    /** The marker a numbered frame without messages ends with (a recycle notice), if numbered. */
    emptyFrameMarker(session: Session): string | undefined;
  };
  /** This node's place in the cluster: owners of clientIds, forwarding to them. */
  readonly cluster: ClusterView;
}

/** What forwarding needs to know of the cluster (`kernel/cluster-link.ts`). */
export interface ClusterView {
  /** The node owning a clientId when it is not this one. */
  ownedElsewhere(clientId: unknown): string | null;
  /** Whether that node is alive (its sessions can be reached by forwarding). */
  isAlive(nodeId: string): MaybePromise<boolean>;
  forward(nodeId: string, request: ForwardRequest): Promise<ForwardResponse>;
  /** Whether the engine can serve now (Redis reachable): a forward that failed without it says nothing of the owner. */
  engineReady(): boolean;
  /** A session handed over at a drain: adopted here (`here`, or unknown), or the node that adopted it. */
  locate(clientId: unknown, kind: CarrierKind): MaybePromise<'here' | { readonly node: string }>;
  /** Asks `nodeId` to answer the held long-poll of `clientId` now (this node shuts down). */
  release(nodeId: string, clientId: string): Promise<unknown>;
  /** Gives `nodeId` deliveries for its session back: the client of the batch they answered went away. */
  requeue(nodeId: string, clientId: string, messages: string[]): Promise<unknown>;
  /** Whether this node handed that session over. */
  handedOver(clientId: unknown): boolean;
}
