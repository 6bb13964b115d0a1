/**
 * What `@bayou/react` needs from `@bayou/client`: connection state, channel
 * subscriptions and the record store. `BayouClient` satisfies it; a test double can too.
 */
import type { BayouClient, Message, PresenceSnapshot } from '@bayou/client';

/**
 * A record subscription's options: a field subset and a maximum update rate (updates/s).
 * The client keeps one store per subject and option set; the server subscription asks for
 * the union of the open stores' fields and the highest frequency.
 */
export interface RecordOptions {
  fields?: readonly string[];
  maxFrequency?: number;
}

/** The client's framework-agnostic store of one record subject (`BayouClient.recordStore`). */
export interface RecordStore {
  /** The first listener opens the server subscription, the last unsubscribe releases it. */
  readonly subject: string;
  subscribe(listener: (changedFields: readonly string[]) => void): () => void;
  /** The same object until a field changes; `null` before the first image. */
  getSnapshot(): Readonly<Record<string, unknown>> | null;
  getField(name: string): unknown;
}

/** The part of `BayouClient` the bindings use. */
export interface BayouReactClient {
  readonly state: BayouClient['state'];
  readonly transport: BayouClient['transport'];
  on: BayouClient['on'];
  /**
   * `ready` (as `BayouClient` has it) settles with the server's reply to the subscribe;
   * without it a subscription counts as accepted once data arrives.
   */
  subscribe(
    channel: string,
    handler: (message: Message) => void,
  ): { unsubscribe(): void; ready?: Promise<void> };
  recordStore(subject: string, options?: RecordOptions): RecordStore;
  /** Who is in a channel (`BayouClient.presence`); needed by `usePresence` only. */
  presence?(channel: string): PresenceStore;
}

/** The client's store of a channel's members (`BayouClient.presence`). */
export interface PresenceStore {
  subscribe(listener: () => void): () => void;
  getSnapshot(): PresenceSnapshot;
}
