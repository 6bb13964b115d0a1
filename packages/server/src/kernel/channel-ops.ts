/**
 * What a session does with channels, as the meta handlers and the server API ask it:
 * subscribe (then join the channel's presence, when presence is on), unsubscribe (leaving
 * it first), and what follows a subscribe reply (a record subject's image, or the
 * extensions' follow-up, such as replay's recovery).
 */
import type { Message } from '@bayou/protocol';
import { parseChannel } from '@bayou/protocol';
import type { ExtensionPipeline } from '../bayeux/extensions.js';
import type { ChannelAccess } from '../bayeux/kernel-api.js';
import type { MaybePromise } from '../engine/engine.js';
import type { RecordStore } from '../records/record-store.js';
import type { Session } from '../session/session.js';
import { andThen } from './hooks.js';
import type { PresenceTracker } from './presence-tracker.js';
import type { Subscriptions } from './subscriptions.js';

export class ChannelOps implements ChannelAccess {
  constructor(
    private readonly subscriptions: Subscriptions,
    private readonly presence: PresenceTracker,
    private readonly records: RecordStore,
    private readonly extensions: ExtensionPipeline,
  ) {}

  /** Subscribes `session` to `name`; resolves with an error string when it failed. */
  subscribe(session: Session, name: string, message: Message): MaybePromise<string | undefined> {
    const done = this.subscriptions.subscribe(session, name, message);
    const presence = this.presence;
    if (!presence.enabled) return done;
    return andThen(done, (error) => error ?? presence.join(session, name, message));
  }

  unsubscribe(session: Session, name: string): void {
    if (this.presence.enabled) this.presence.leave(session, name);
    this.subscriptions.unsubscribe(session, name);
  }

  /** After the subscribe reply went out: a record subscriber gets the image; extensions follow up. */
  subscribed(session: Session, name: string): void {
    if (parseChannel(name)?.wildcard !== null) return;
    if (this.records.patternFor(name) !== undefined) this.records.sendSnapshotTo(session, name);
    else this.extensions.subscribed(session, name);
  }

  isRecordSubject(channel: string): boolean {
    return this.records.patternFor(channel) !== undefined;
  }
}
