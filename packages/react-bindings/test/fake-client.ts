/** A test double of the client: record stores fed by the test, connection state and channels driven by hand. */
import type { ClientEvents, ConnectionState, Message } from '@bayou/client';
import type { BayouReactClient, RecordOptions, RecordStore } from '../src/client-contract.js';

export class FakeStore implements RecordStore {
  image: Readonly<Record<string, unknown>> | null = null;
  readonly listeners = new Set<(changed: readonly string[]) => void>();
  /** How many times the store went from no listener to one (a server subscription). */
  opened = 0;

  constructor(readonly subject: string) {}

  subscribe(listener: (changed: readonly string[]) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.opened++;
    return () => {
      this.listeners.delete(listener);
    };
  }

  getSnapshot(): Readonly<Record<string, unknown>> | null {
    return this.image;
  }

  getField(name: string): unknown {
    return this.image?.[name];
  }

  /** Merges `fields`; notifies the listeners with the names whose values changed. */
  push(fields: Record<string, unknown>): void {
    const changed = Object.keys(fields).filter((k) => !Object.is(this.image?.[k], fields[k]));
    if (changed.length === 0) return;
    this.image = { ...this.image, ...fields };
    for (const listener of [...this.listeners]) listener(changed);
  }
}

type Listener = (...args: never[]) => void;

export class FakeClient implements BayouReactClient {
  state: ConnectionState = 'disconnected';
  transport: string | null = null;
  readonly stores = new Map<string, FakeStore>();
  readonly requested = new Map<string, RecordOptions>();
  readonly channels = new Map<string, Set<(message: Message) => void>>();
  private readonly events = new Map<string, Set<Listener>>();

  on<K extends keyof ClientEvents>(event: K, listener: ClientEvents[K]): () => void {
    let set = this.events.get(event);
    if (set === undefined) {
      set = new Set();
      this.events.set(event, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  /** The server could not recover what `channel` missed (the client's `gap` event). */
  gap(channel: string): void {
    const info = { channel, from: null, to: { offset: 0, epoch: 'new' } };
    for (const l of this.events.get('gap') ?? []) (l as (i: typeof info) => void)(info);
  }

  setState(next: ConnectionState): void {
    const previous = this.state;
    this.state = next;
    for (const l of this.events.get('state') ?? []) (l as (a: string, b: string) => void)(next, previous);
  }

  /** Channels whose subscribe the "server" refuses, with the error `ready` rejects with. */
  readonly denied = new Map<string, Error>();

  subscribe(
    channel: string,
    handler: (message: Message) => void,
  ): { unsubscribe(): void; ready: Promise<void> } {
    const error = this.denied.get(channel);
    const ready = error === undefined ? Promise.resolve() : Promise.reject(error);
    let set = this.channels.get(channel);
    if (set === undefined) {
      set = new Set();
      this.channels.set(channel, set);
    }
    set.add(handler);
    return { unsubscribe: () => set.delete(handler), ready };
  }

  deliver(channel: string, data: unknown): void {
    for (const h of this.channels.get(channel) ?? []) h({ channel, data });
  }

  /** Like the client: one store per subject, the options of the first request kept for the server. */
  recordStore(subject: string, options?: RecordOptions): FakeStore {
    let store = this.stores.get(subject);
    if (store === undefined) {
      store = new FakeStore(subject);
      this.stores.set(subject, store);
      this.requested.set(subject, { ...options });
    }
    return store;
  }

  /** Stores with at least one listener now (what the server would count). */
  get liveStores(): number {
    return [...this.stores.values()].filter((s) => s.listeners.size > 0).length;
  }
}

/** An IntersectionObserver the test drives: `setInView(element, true)`. */
export class FakeIntersectionObserver {
  static readonly instances = new Set<FakeIntersectionObserver>();
  readonly targets = new Set<Element>();

  constructor(
    private readonly callback: (entries: { target: Element; isIntersecting: boolean }[]) => void,
    readonly options: { root?: Element | null; rootMargin?: string } = {},
  ) {
    FakeIntersectionObserver.instances.add(this);
  }

  observe(target: Element): void {
    this.targets.add(target);
  }

  unobserve(target: Element): void {
    this.targets.delete(target);
  }

  disconnect(): void {
    this.targets.clear();
    FakeIntersectionObserver.instances.delete(this);
  }

  takeRecords(): [] {
    return [];
  }

  static setInView(targets: Iterable<Element>, isIntersecting: boolean): void {
    for (const observer of FakeIntersectionObserver.instances) {
      const entries = [...targets]
        .filter((t) => observer.targets.has(t))
        .map((target) => ({ target, isIntersecting }));
      if (entries.length > 0) observer.callback(entries);
    }
  }

  static get observed(): number {
    let n = 0;
    for (const o of FakeIntersectionObserver.instances) n += o.targets.size;
    return n;
  }
}
