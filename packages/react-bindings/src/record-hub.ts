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

interface Entry {
  readonly store: RecordStore;
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
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      set.delete(onChange);
      if (set.size === 0) entry.watchers.delete(field);
      if (--entry.count === 0) this.close(entry);
    };
  }

  private open(store: RecordStore): Entry {
    const entry: Entry = {
      store,
      watchers: new Map(),
      count: 0,
      release: () => {},
      dirty: new Set(),
      flush: () => this.flush(entry),
    };
    this.entries.set(store, entry);
    entry.release = store.subscribe((changed) => this.changed(entry, changed));
    return entry;
  }

  private close(entry: Entry): void {
    if (this.entries.get(entry.store) === entry) this.entries.delete(entry.store);
    entry.dirty.clear();
    entry.release();
  }

  private changed(entry: Entry, fields: readonly string[]): void {
    this.updateCount++;
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

function notify(watchers: Set<() => void> | undefined): void {
  if (watchers === undefined) return;
  for (const onChange of [...watchers]) onChange();
}
