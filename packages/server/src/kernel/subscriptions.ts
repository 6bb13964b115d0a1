/**
 * Subscribing and unsubscribing sessions: plain channels and wildcards in the index (the
 * engine learns of a channel's first subscriber on this node), record subjects in the
 * record store (the first local subscriber fetches the image and starts the provider
 * somewhere in the cluster), and the `subscribing` extensions (replay) for concrete
 * channels. A failure undoes what was done and is the subscribe's error.
 */
import { type Message, parseChannel } from '@bayou/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { ExtensionPipeline } from '../bayeux/extensions.js';
import type { SubscriptionIndex } from '../channels/subscription-index.js';
import type { Broker, MaybePromise } from '../engine/engine.js';
import type { ProviderRegistry } from '../records/provider-registry.js';
import { recordEncoding } from '../records/record-codec.js';
import { readRecordRequest } from '../records/record-options.js';
import type { RecordStore } from '../records/record-store.js';
import type { Session } from '../session/session.js';
import type { ChannelOccupancy } from './channel-occupancy.js';
import { andThen, errorFor } from './hooks.js';

/** How the kernel runs engine and extension calls (errors become Bayeux error strings). */
export interface CallGuards {
  engineCall(call: () => MaybePromise<unknown>, undo: () => void): MaybePromise<string | undefined>;
  extensionCall(call: () => MaybePromise<string | undefined>): MaybePromise<string | undefined>;
  readonly log: FastifyBaseLogger;
}

export class Subscriptions {
  constructor(
    private readonly index: SubscriptionIndex,
    private readonly records: RecordStore,
    private readonly providers: ProviderRegistry,
    private readonly broker: Broker,
    private readonly extensions: ExtensionPipeline,
    private readonly guards: CallGuards,
    /** Told of each concrete channel's first and last subscriber on this node, when on. */
    private readonly occupancy: ChannelOccupancy | null = null,
  ) {}

  /** Subscribes `session` to `name`; resolves with an error string when it failed. */
  subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined> {
    const info = parseChannel(name);
    // A wildcard is never a record subject, even when it equals a record pattern.
    const pattern = info?.wildcard === null ? this.records.patternFor(name) : undefined;
    if (pattern !== undefined) {
      session.subscriptions.add(name);
      const request = readRecordRequest(message.ext);
      const first = this.records.subscribe(session, name, pattern, request, recordEncoding(session));
      if (!first) return undefined;
      this.occupancy?.added(name);
      return this.firstRecordSubscriber(session, name);
    }
    if (session.subscriptions.has(name)) return undefined;
    const concrete = info?.wildcard === null && this.extensions.size > 0;
    if (concrete) {
      // Before the session is in the index: a live message that reaches it from now on is
      // held (replay) instead of overtaking what `subscribing` will fetch from history.
      const refused = this.guards.extensionCall(() =>
        this.extensions.beforeSubscribe(session, name, message),
      );
      if (typeof refused === 'string') return refused;
    }
    const first = this.index.add(name, session);
    if (first && info?.wildcard === null && info.kind === 'broadcast') this.occupancy?.added(name);
    const interest = first
      ? this.guards.engineCall(
          () => this.broker.subscribe(name),
          () => this.removeFromIndex(session, name),
        )
      : undefined;
    if (!concrete) return interest;
    // A concrete channel: extensions (replay) may prepare what the subscriber missed.
    return andThen(interest, (error) => {
      if (error !== undefined) return error;
      const prepared = this.guards.extensionCall(() => this.extensions.subscribing(session, name, message));
      return andThen(prepared, (refused) => {
        if (refused !== undefined) this.drop(session, name);
        return refused;
      });
    });
  }

  unsubscribe(session: Session, name: string): void {
    if (session.subscriptions.has(name)) this.drop(session, name);
  }

  /** Removes one subscription of `session`, telling the engine and providers when it was the last here. */
  drop(session: Session, name: string): void {
    if (this.records.unsubscribe(session, name)) this.lastRecordSubscriber(name);
    session.subscriptions.delete(name);
    if (this.removeFromIndex(session, name)) {
      void Promise.resolve(this.broker.unsubscribe(name)).catch(() => undefined);
    }
  }

  /** Takes `session` out of the index for `name`; `true` when it was the last one here. */
  private removeFromIndex(session: Session, name: string): boolean {
    this.extensions.unsubscribed(session, name);
    if (!this.index.remove(name, session)) return false;
    if (this.occupancy !== null) {
      const info = parseChannel(name);
      if (info?.wildcard === null && info.kind === 'broadcast') this.occupancy.removed(name);
    }
    return true;
  }

  private firstRecordSubscriber(session: Session, subject: string): MaybePromise<string | undefined> {
    const steps: Promise<unknown>[] = [];
    const interest = this.broker.subscribe(subject);
    if (interest instanceof Promise) steps.push(interest);
    // In a cluster the image may live on another node: fetch it once.
    if (!this.records.hasImage(subject)) {
      steps.push(
        this.broker.recordImage(subject).then((image) => {
          if (image !== null && !this.records.hasImage(subject)) this.records.apply(subject, image);
        }),
      );
    }
    const providing = this.providers.subscribed(subject);
    if (providing !== undefined) steps.push(providing);
    if (steps.length === 0) return undefined;
    return Promise.all(steps).then(
      () => undefined,
      (err: unknown) => {
        session.subscriptions.delete(subject);
        if (this.records.unsubscribe(session, subject)) this.lastRecordSubscriber(subject);
        return errorFor(err, this.guards.log, 'record subscription');
      },
    );
  }

  private lastRecordSubscriber(subject: string): void {
    this.occupancy?.removed(subject);
    this.providers.unsubscribed(subject);
    void Promise.resolve(this.broker.unsubscribe(subject)).catch(() => undefined);
  }
}
