/**
 * This node as the engine sees it (`EngineNode`): publications from the cluster for its
 * subscribers, direct deliveries and node-to-node requests on its inbox (operations, and
 * long-poll batches other nodes forwarded for its sessions, run by `forwarded`), and
 * presence members of nodes found dead.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { EngineConnectionChange, EngineNode, LostMember, Publication } from '../engine/engine.js';
import type { RecordStore } from '../records/record-store.js';
import type { Session } from '../session/session.js';
import type { ClusterLink, DirectMessage } from './cluster-link.js';
import type { MessageTracing } from './message-tracing.js';
import { type ForwardHandler, NodeLink } from './node-link.js';
import type { PresenceTracker } from './presence-tracker.js';

export type { ForwardHandler };

export interface NodeInboundParts {
  readonly cluster: ClusterLink;
  readonly control: NodeLink;
  readonly records: RecordStore;
  readonly index: { deliver(publication: Publication): number };
  readonly presence: PresenceTracker;
  findSession(clientId: unknown): Session | undefined;
  readonly forwarded: ForwardHandler | null;
  /** Starts the publish-to-write clock (`KernelStats.publicationArrived`). */
  readonly stats: { publicationArrived(): void };
  /** Delivery spans of traced publications; `null` without an OpenTelemetry SDK. */
  readonly tracing: MessageTracing | null;
  readonly log: FastifyBaseLogger;
  /** Tells the subscribers of `name` that messages on it may have been lost; returns how many heard. */
  gap(name: string): number;
}

export class NodeInbound implements EngineNode {
  readonly nodeId: string;

  constructor(private readonly p: NodeInboundParts) {
    this.nodeId = p.cluster.nodeId;
  }

  /** A publication from the engine, for this node's subscribers. */
  deliver(publication: Publication): void {
    if (publication.channel === this.p.cluster.inbox) {
      if (NodeLink.owns(publication.payload)) {
        this.p.control.receive(publication.payload, this.p.forwarded);
        return;
      }
      this.direct(JSON.parse(publication.payload) as DirectMessage);
      return;
    }
    if (publication.record === true) {
      this.p.records.apply(publication.channel, JSON.parse(publication.payload) as Record<string, unknown>);
      return;
    }
    if (publication.trace === undefined) this.toSessions(publication);
    else if (this.p.tracing !== null) this.p.tracing.delivering(publication, this.toSessions);
    // Untraced here (no SDK on this node): as it came, without the trace.
    else
      this.toSessions({
        channel: publication.channel,
        payload: publication.payload,
        position: publication.position,
      });
  }

  /**
   * A direct message for a session of this node, or a ring: its mail in the engine has
   * messages for it, taken now — or once the adoption under way here ends (the claim took
   * what was there before). A ring for a session not here is left alone: its mail waits for
   * the node that claims it, or expires.
   */
  private direct(direct: DirectMessage): void {
    const to = direct.to;
    if ('message' in direct) {
      this.p.findSession(to)?.enqueue(direct.message);
      return;
    }
    const adopting = this.p.findSession(to) === undefined ? this.p.cluster.adopting(to) : undefined;
    const take = (): void => {
      if (this.p.findSession(to) === undefined) return;
      this.p.cluster.takeMail(to).then(
        (mail) => {
          const session = this.p.findSession(to);
          if (session !== undefined) for (const message of mail) session.enqueue(message);
          // Handed over meanwhile: on to where it is now (its record's mail, or its adopter).
          else for (const message of mail) this.sendOn(to, message);
        },
        (err: unknown) => this.p.log.warn({ err, clientId: to }, 'taking the mail of a session failed'),
      );
    };
    if (adopting === undefined) take();
    else void adopting.then(take, () => undefined);
  }

  private sendOn(clientId: string, message: string): void {
    const sent = this.p.cluster.sendDirect(clientId, message);
    if (sent instanceof Promise)
      sent.catch((err: unknown) =>
        this.p.log.warn({ err, clientId }, 'a direct message could not be sent on'),
      );
  }

  private readonly toSessions = (publication: Publication): number => {
    const reached = this.p.index.deliver(publication);
    if (reached > 0) this.p.stats.publicationArrived();
    return reached;
  };

  /** Members of a node found dead, for this node to announce (the engine picked it). */
  membersLost(lost: readonly LostMember[]): void {
    this.p.presence.lost(lost);
  }

  /** This node's members, written again after the cluster took it for dead: announced as joins. */
  membersRestored(members: readonly LostMember[]): void {
    this.p.presence.restored(members);
  }

  /** The engine lost Redis or has it back: one line each (warn, then info), for the operator. */
  connectionChanged({ up, where, reason }: EngineConnectionChange): void {
    if (up) this.p.log.info({ redis: where }, `Redis at ${where} is back: serving again`);
    else
      this.p.log.warn(
        { redis: where, reason },
        `Redis at ${where} went away (${reason}): publishes fail and /readyz answers 503 until it is back (reconnecting every second)`,
      );
  }

  /** The engine lost messages on these names and history could not fill in: their subscribers are told. */
  missed(names: readonly string[]): void {
    let told = 0;
    for (const name of names) told += this.p.gap(name);
    if (told > 0)
      this.p.log.info(
        { channels: names.slice(0, 20), sessions: told },
        `messages may have been lost on ${names.length} subscription name(s) (engine connection silent or cut, no history to recover from): ${told} gap notice(s) sent`,
      );
  }

  /** What the engine reports about how it serves this node (probes failing, passing again). */
  notice(level: 'warn' | 'info', message: string): void {
    this.p.log[level](message);
  }
}
