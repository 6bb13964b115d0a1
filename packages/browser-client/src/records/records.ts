/**
 * The client's record stores and the server subscriptions behind them. A store belongs to
 * one subject and one option set (`fields`, `maxFrequency`); every store of a subject
 * shares one server subscription, whose options are the merge of the open stores'
 * options: the union of their fields (all fields if any store wants all) and the highest
 * `maxFrequency` any store asked for (the server's default if none did). When the merge
 * changes, the subject is unsubscribed and subscribed again in one frame, and the server
 * sends a fresh snapshot. Each store shows only its own fields.
 */
import { EXT_RECORD_KIND, parseChannel } from '@bayou/protocol';
import type { MessageHandler, Subscription } from '../subscriptions.js';
import type { Message } from '../types.js';
import type { RecordCodec, RecordOptions } from './record-codec.js';
import { type RecordImage, RecordStore } from './record-store.js';

/** What `client.record()` returns. */
export interface RecordHandle {
  readonly store: RecordStore;
  close(): void;
}

export type RecordCallback = (image: RecordImage, changedFields: readonly string[]) => void;

/** What the records need from the client. */
export interface RecordHost {
  subscribe(channel: string, handler: MessageHandler): Subscription;
  batch<T>(fn: () => T): T;
}

/** One subject's server subscription, shared by its open stores. */
interface Feed {
  readonly subject: string;
  readonly stores: Set<RecordStore>;
  subscription: Subscription | null;
  /** The key of the options the current subscription asked for. */
  request: string;
  /** The image as the server sends it (the union of the stores' fields). */
  image: Record<string, unknown> | null;
  /** Deltas are dropped until a snapshot arrives: after a new session or a new subscription. */
  awaitSnapshot: boolean;
}

export class Records {
  private readonly stores = new Map<string, RecordStore>();
  private readonly options = new Map<RecordStore, RecordOptions>();
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly codec: RecordCodec,
    private readonly host: RecordHost,
  ) {}

  /** The store of `subject` for this option set (one per distinct set). */
  store(subject: string, options: RecordOptions = {}): RecordStore {
    const normal = normalize(options);
    const key = `${subject}\n${optionsKey(normal)}`;
    let store = this.stores.get(key);
    if (store === undefined) {
      store = new RecordStore(
        subject,
        {
          open: (s) => this.openStore(s),
          close: (s) => this.closeStore(s),
        },
        normal.fields,
      );
      this.stores.set(key, store);
      this.options.set(store, normal);
    }
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

  /** A new server session: every subject's next message must be a snapshot. */
  newSession(): void {
    for (const feed of this.feeds.values()) feed.awaitSnapshot = true;
  }

  private openStore(store: RecordStore): void {
    let feed = this.feeds.get(store.subject);
    if (feed === undefined) {
      feed = {
        subject: store.subject,
        stores: new Set(),
        subscription: null,
        request: '',
        image: null,
        awaitSnapshot: true,
      };
      this.feeds.set(store.subject, feed);
    }
    feed.stores.add(store);
    if (!this.refresh(feed) && feed.image !== null && !feed.awaitSnapshot) {
      // Same server options: the new store starts from the image the subject already has.
      store.receive({ channel: feed.subject, data: feed.image, ext: { [EXT_RECORD_KIND]: 's' } });
    }
  }

  private closeStore(store: RecordStore): void {
    // The store object stays (UI bindings may hold it); its image is stale from now on.
    store.clear();
    const feed = this.feeds.get(store.subject);
    if (feed === undefined || !feed.stores.delete(store)) return;
    if (feed.stores.size > 0) {
      this.refresh(feed);
      return;
    }
    feed.subscription?.unsubscribe();
    this.feeds.delete(feed.subject);
  }

  /** Subscribes again when the merged options changed; true when it did. */
  private refresh(feed: Feed): boolean {
    const merged = merge([...feed.stores].map((s) => this.options.get(s) ?? {}));
    const key = optionsKey(merged);
    if (feed.subscription !== null && key === feed.request) return false;
    feed.request = key;
    this.codec.requests.set(feed.subject, merged);
    feed.image = null;
    // The stores keep their images until the snapshot replaces them (no flash of nothing).
    feed.awaitSnapshot = true;
    const old = feed.subscription;
    this.host.batch(() => {
      old?.unsubscribe();
      feed.subscription = this.host.subscribe(feed.subject, (message) => this.receive(feed, message));
    });
    return true;
  }

  private receive(feed: Feed, message: Message): void {
    const fields = message.data as Record<string, unknown> | null | undefined;
    if (fields === null || typeof fields !== 'object') return;
    if (message.ext?.[EXT_RECORD_KIND] === 's') {
      feed.image = { ...fields };
      feed.awaitSnapshot = false;
    } else if (feed.image === null || feed.awaitSnapshot) {
      return; // a delta with no image to apply it to: wait for the snapshot
    } else {
      Object.assign(feed.image, fields);
    }
    for (const store of [...feed.stores]) store.receive(message);
  }
}

function normalize(options: RecordOptions): RecordOptions {
  const { fields, maxFrequency } = options ?? {};
  if (
    (fields !== undefined && !(Array.isArray(fields) && fields.every((f) => typeof f === 'string'))) ||
    (maxFrequency !== undefined && !(typeof maxFrequency === 'number' && maxFrequency > 0))
  ) {
    throw new TypeError('BayouClient: record options: fields must be strings, maxFrequency a number > 0');
  }
  const out: { fields?: readonly string[]; maxFrequency?: number } = {};
  if (fields !== undefined) out.fields = [...new Set(fields)].sort();
  if (maxFrequency !== undefined) out.maxFrequency = maxFrequency;
  return out;
}

/** The options the server gets for a subject opened with each of `all`. */
export function merge(all: readonly RecordOptions[]): RecordOptions {
  const out: { fields?: readonly string[]; maxFrequency?: number } = {};
  if (all.length > 0 && all.every((o) => o.fields !== undefined)) {
    out.fields = [...new Set(all.flatMap((o) => o.fields ?? []))].sort();
  }
  const rates = all.map((o) => o.maxFrequency).filter((f): f is number => f !== undefined);
  if (rates.length > 0) out.maxFrequency = Math.max(...rates);
  return out;
}

function optionsKey(options: RecordOptions): string {
  return JSON.stringify([options.fields ?? null, options.maxFrequency ?? null]);
}

/** Throws unless `subject` can be a record subject (a plain broadcast channel). */
export function checkRecordSubject(subject: string): void {
  const info = parseChannel(subject);
  if (info?.kind !== 'broadcast' || info.wildcard) {
    throw new TypeError(`BayouClient: "${subject}" is not a record subject (a plain broadcast channel)`);
  }
}
