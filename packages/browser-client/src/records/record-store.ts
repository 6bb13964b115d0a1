/**
 * A framework-agnostic store for one record subject: the image the client keeps, kept up
 * to date by the subject's subscription, for any UI library to bind (`subscribe` /
 * `getSnapshot` as React's `useSyncExternalStore` expects). The server subscription opens
 * with the first listener and closes with the last.
 */
import { EXT_RECORD_KIND } from '@bayou/protocol';
import type { Message } from '../types.js';

export type RecordImage = Readonly<Record<string, unknown>>;
export type RecordListener = (changedFields: readonly string[]) => void;

/** The part of the client a store needs. */
export interface RecordSource {
  open(store: RecordStore): void;
  close(store: RecordStore): void;
}

export class RecordStore {
  private image: RecordImage | null = null;
  private readonly listeners = new Set<RecordListener>();

  private readonly fields: ReadonlySet<string> | null;

  /** `fields`: the only fields this store shows (all when omitted). */
  constructor(
    readonly subject: string,
    private readonly source: RecordSource,
    fields?: readonly string[],
  ) {
    this.fields = fields === undefined ? null : new Set(fields);
  }

  /** Adds a listener; the first one opens the server subscription. Returns the unsubscribe. */
  subscribe = (listener: RecordListener): (() => void) => {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.source.open(this);
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.source.close(this);
    };
  };

  /** The current image: the same object until a field changes; `null` before the first. */
  getSnapshot = (): RecordImage | null => this.image;

  getField(name: string): unknown {
    return this.image?.[name];
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Forgets the image once nobody listens: the next subscriber gets a fresh snapshot. */
  clear(): void {
    this.image = null;
  }

  /**
   * A record message for this subject: a snapshot replaces the image, a delta merges into
   * it. A delta with no image to merge into is dropped: it is not the whole record.
   */
  receive(message: Message): void {
    const data = message.data as Record<string, unknown> | undefined;
    if (data === null || typeof data !== 'object') return;
    const kind = message.ext?.[EXT_RECORD_KIND];
    const previous = this.image;
    if (kind !== 's' && previous === null) return;
    const fields = this.fields === null ? data : pick(data, this.fields);
    const changed: string[] = [];
    if (kind === 's' || previous === null) {
      for (const name of Object.keys(fields)) if (previous?.[name] !== fields[name]) changed.push(name);
      if (previous !== null)
        for (const name of Object.keys(previous)) if (!(name in fields)) changed.push(name);
      this.image = Object.freeze({ ...fields });
    } else {
      for (const name of Object.keys(fields)) if (previous[name] !== fields[name]) changed.push(name);
      if (changed.length === 0) return;
      this.image = Object.freeze({ ...previous, ...fields });
    }
    if (changed.length === 0) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(changed);
      } catch (err) {
        setTimeout(() => {
          throw err;
        }, 0);
      }
    }
  }
}

function pick(data: Record<string, unknown>, names: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(data)) if (names.has(name)) out[name] = data[name];
  return out;
}
