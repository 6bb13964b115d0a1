/**
 * What leaves this node towards the engine: broadcasts, record updates, and deliveries to
 * one session wherever in the cluster it lives. The facade's `publish`, `updateRecord` and
 * `deliver`, and the `/meta/publish` handler, all come here.
 */
import type { Engine, HistoryPolicy, MaybePromise, StreamPosition } from '../engine/engine.js';
import type { RecordStore } from '../records/record-store.js';
import type { Session } from '../session/session.js';
import type { ClusterLink } from './cluster-link.js';
import type { HistoryRules } from './history-rules.js';
import type { KernelStats } from './kernel-stats.js';
import type { MessageTracing } from './message-tracing.js';
import type { NodeTaps } from './node-taps.js';

export interface PublisherParts {
  readonly broker: Engine['broker'];
  readonly records: RecordStore;
  readonly history: HistoryRules;
  readonly stats: KernelStats;
  readonly taps: NodeTaps;
  readonly cluster: ClusterLink;
  /** Spans of traced publishes; `null` without an OpenTelemetry SDK (nothing is traced). */
  readonly tracing: MessageTracing | null;
  /** A live session of this node. */
  findSession(clientId: unknown): Session | undefined;
}

export class Publisher {
  constructor(private readonly p: PublisherParts) {}

  /**
   * Hands a broadcast to the engine; resolves with its position once the engine has it.
   * `traceparent` (checked by the caller with `isTraceparent`) continues a trace when
   * tracing is on; without an SDK it is not even looked at.
   */
  publish(channel: string, data: unknown, traceparent?: string): MaybePromise<StreamPosition | null> {
    this.p.stats.publishes++;
    this.p.taps.published(channel);
    const payload = JSON.stringify({ channel, data });
    const tracing = this.p.tracing;
    if (tracing === null || traceparent === undefined)
      return this.p.broker.publish(channel, payload, this.historyFor(channel));
    return tracing.publish(channel, traceparent, (carried) =>
      this.p.broker.publish(channel, payload, this.historyFor(channel), carried),
    );
  }

  /** Merges `fields` into record `subject` cluster-wide; resolves once the engine has it. */
  updateRecord(subject: string, fields: Record<string, unknown>): MaybePromise<void> {
    const changed = this.p.records.diff(subject, fields);
    if (changed === null) return undefined;
    return this.p.broker.publishRecord(subject, JSON.stringify(changed));
  }

  /** How much history `channel` keeps: the first matching `history` rule, else the defaults. */
  historyFor(channel: string): HistoryPolicy {
    return this.p.history.policyFor(channel);
  }

  /**
   * Sends `data` on `channel` to one session only (a private message, a notice), on
   * whichever node has it: directly when it is here, else through the engine to its node
   * (`ClusterLink.sendDirect`: the node that adopted it when it moved at a drain).
   */
  deliverTo(clientId: string, channel: string, data: unknown): MaybePromise<boolean> {
    const json = JSON.stringify({ channel, data });
    const local = this.p.findSession(clientId);
    if (local !== undefined) {
      local.enqueue(json);
      return true;
    }
    return this.p.cluster.sendDirect(clientId, json);
  }
}
