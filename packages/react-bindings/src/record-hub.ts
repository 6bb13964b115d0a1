/**
 * The bindings' framework-agnostic core: components watch one field (or the whole record)
 * of a client record store. The hub holds one store listener per record however many
 * components watch it (the client then holds one server subscription), remembers which
 * fields changed, and at the next frame notifies only the watchers of those fields.
 */
import type { BayouReactClient, RecordOptions, RecordStore } from './client-contract.js';
import { FrameBatcher, type Schedule } from './frame-batcher.js';

/** Watches every field of a record rather than one. */
export const ALL_FIELDS = '*';

/**
 * Where a subscription stands: `'idle'` (not subscribed: `enabled: false`), `'connecting'`
 * (waiting for the server's reply, or for the client to connect; also during server
 * rendering), `'subscribed'` (the server accepted it) or `'error'` (the server refused it,
 * e.g. `403` from an authorizer, or the client stopped before the reply).
 */
/**
 * `'gap'`: after a reconnect the server could not recover what the subscription missed
 * (the client's `gap` event); data flows again, but the app should re-fetch its state.
 * It stays until the next message (channels) or the fresh snapshot (records) arrives.
 */
export type SubscriptionStatus = 'idle' | 'connecting' | 'subscribed' | 'gap' | 'error';

interface Entry {
  readonly store: RecordStore;
  status: SubscriptionStatus;
  error: Error | null;
  readonly statusWatchers: Set<() => void>;
  probe: { unsubscribe(): void } | null;
  readonly watchers: Map<string, Set<() => void>>;
  count: number;
  release: () => void;
  dirty: Set<string>;
  readonly flush: () => void;
}

export interface RecordHubStats {
  /** Records this hub holds a store subscription on (live record subscriptions). */
  readonly liveRecords: number;
  /** Record notifications received since the hub was created (snapshots and deltas). */
  readonly updates: number;
}

export class RecordHub {
  private readonly entries = new Map<RecordStore, Entry>();
  private readonly batcher: FrameBatcher;
  private updateCount = 0;

  constructor(
    readonly client: BayouReactClient,
    schedule: Schedule,
  ) {
    this.batcher = new FrameBatcher(schedule);
  }

  /** The client's store for `subject` and `options` (opens nothing until watched). */
  store(subject: string, options?: RecordOptions): RecordStore {
    return this.client.recordStore(subject, options);
  }

  get stats(): RecordHubStats {
    return { liveRecords: this.entries.size, updates: this.updateCount };
  }

  /**
   * Calls `onChange` (at most once a frame) when `field` of `store` changes, or any field
   * for `ALL_FIELDS`. The first watcher of a store subscribes to it; the returned function
   * removes the watcher, and the last one releases the store subscription.
   */
  watch(store: RecordStore, field: string, onChange: () => void): () => void {
    const entry = this.entries.get(store) ?? this.open(store);
    let set = entry.watchers.get(field);
    if (set === undefined) {
      set = new Set();
      entry.watchers.set(field, set);
    }
    set.add(onChange);
    entry.count++;
    entry.statusWatchers.add(onChange);
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      set.delete(onChange);
      entry.statusWatchers.delete(onChange);
      if (set.size === 0) entry.watchers.delete(field);
      if (--entry.count === 0) this.close(entry);
    };
  }

  /** The status of `store`'s subscription (`'connecting'` while nobody watches it yet). */
  status(store: RecordStore): SubscriptionStatus {
    return this.entries.get(store)?.status ?? 'connecting';
  }

  /** Why `store`'s subscription failed, or `null`. */
  error(store: RecordStore): Error | null {
    return this.entries.get(store)?.error ?? null;
  }

  private open(store: RecordStore): Entry {
    const entry: Entry = {
      store,
      status: 'connecting',
      error: null,
      statusWatchers: new Set(),
      probe: null,
      watchers: new Map(),
      count: 0,
      release: () => {},
      dirty: new Set(),
      flush: () => this.flush(entry),
    };
    this.entries.set(store, entry);
    entry.release = store.subscribe((changed) => this.changed(entry, changed));
    // A second handler on the subject's channel shares the store's server subscription
    // (the client sends one subscribe per channel) and tells whether the server accepted it.
    const probe = this.client.subscribe(store.subject, ignore);
    entry.probe = probe;
    probe.ready?.then(
      () => this.setStatus(entry, 'subscribed', null),
      (error: unknown) =>
        this.setStatus(entry, 'error', error instanceof Error ? error : new Error(String(error))),
    );
    return entry;
  }

  private setStatus(entry: Entry, status: SubscriptionStatus, error: Error | null): void {
    if (this.entries.get(entry.store) !== entry || entry.status === status) return;
    entry.status = status;
    entry.error = error;
    for (const onChange of [...entry.statusWatchers]) onChange();
  }

  private close(entry: Entry): void {
    if (this.entries.get(entry.store) === entry) this.entries.delete(entry.store);
    entry.dirty.clear();
    entry.statusWatchers.clear();
    entry.probe?.unsubscribe();
    entry.release();
  }

  private changed(entry: Entry, fields: readonly string[]): void {
    this.updateCount++;
    // Data proves the subscription (for clients whose subscriptions have no `ready`).
    if (entry.status === 'connecting') this.setStatus(entry, 'subscribed', null);
    for (const field of fields) entry.dirty.add(field);
    this.batcher.enqueue(entry.flush);
  }

  private flush(entry: Entry): void {
    if (entry.dirty.size === 0) return;
    const dirty = entry.dirty;
    entry.dirty = new Set();
    for (const field of dirty) notify(entry.watchers.get(field));
    notify(entry.watchers.get(ALL_FIELDS));
  }
}

function ignore(): void {}

function notify(watchers: Set<() => void> | undefined): void {
  if (watchers === undefined) return;
  for (const onChange of [...watchers]) onChange();
}
