/**
 * The client's record stores: one per subject, one server subscription per subject
 * however many listeners share it, subscribed while anyone listens.
 */
import type { MessageHandler, Subscription } from '../subscriptions.js';
import type { RecordCodec, RecordOptions } from './record-codec.js';
import { type RecordImage, RecordStore } from './record-store.js';

/** What `client.record()` returns. */
export interface RecordHandle {
  readonly store: RecordStore;
  close(): void;
}

export type RecordCallback = (image: RecordImage, changedFields: readonly string[]) => void;

interface Open {
  subscription: Subscription;
}

export class Records {
  private readonly stores = new Map<string, RecordStore>();
  private readonly open = new Map<RecordStore, Open>();

  constructor(
    private readonly codec: RecordCodec,
    private readonly subscribe: (channel: string, handler: MessageHandler) => Subscription,
  ) {}

  /** The store of `subject`; the options of the store's first opening are what the server gets. */
  store(subject: string, options: RecordOptions = {}): RecordStore {
    let store = this.stores.get(subject);
    if (store === undefined) {
      store = new RecordStore(subject, {
        open: (s) => this.openStore(s),
        close: (s) => this.closeStore(s),
      });
      this.stores.set(subject, store);
    }
    if (!this.codec.requests.has(subject)) this.codec.requests.set(subject, { ...options });
    return store;
  }

  record(subject: string, options: RecordOptions, callback: RecordCallback): RecordHandle {
    const store = this.store(subject, options);
    const unsubscribe = store.subscribe((changed) => {
      const image = store.getSnapshot();
      if (image !== null) callback(image, changed);
    });
    // A listener that joins a store which already has an image starts from it.
    const image = store.getSnapshot();
    if (image !== null) queueMicrotask(() => callback(image, Object.keys(image)));
    return { store, close: unsubscribe };
  }

  private openStore(store: RecordStore): void {
    const subscription = this.subscribe(store.subject, (message) => store.receive(message));
    this.open.set(store, { subscription });
  }

  private closeStore(store: RecordStore): void {
    this.open.get(store)?.subscription.unsubscribe();
    this.open.delete(store);
    // The store object stays (UI bindings may hold it); its image is stale from now on.
    store.clear();
  }
}
