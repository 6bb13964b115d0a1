/**
 * Who is in a channel, for a server that keeps presence there (a channel rule with
 * `presence: true`). `client.presence(channel)` gives a store in the shape UI libraries
 * bind (`subscribe(listener)` returns an unsubscribe, `getSnapshot()` is stable until
 * something changed): its first listener follows `/presence<channel>` and asks
 * `/service/presence` for the members; joins and leaves keep the list current; after a
 * reconnect the list is asked again. `members()` asks once, without following.
 *
 * Being in the list is not this: a client is a member while it subscribes to the channel
 * itself (`client.subscribe(channel, …)`).
 */
import { PRESENCE_SERVICE, presenceChannel } from '@bayou/protocol';
import type { BayouError } from './errors.js';
import type { Message } from './types.js';

export interface PresenceMember {
  clientId: string;
  /** The `sub` of the member's token; `null` for a session without one. */
  user: string | null;
  /** From the token's `bayou.info` claim and the subscribe's `ext.presence.info`. */
  info: Record<string, unknown>;
}

export interface PresenceEvent {
  action: 'join' | 'leave';
  member: PresenceMember;
}

export interface PresenceSnapshot {
  /** Current members, in the order they joined as far as this client saw. */
  readonly members: readonly PresenceMember[];
  /** `true` once the list came from the server (and while it stays current). */
  readonly ready: boolean;
  /** Why the server refused (e.g. `403:<channel>:subscribe_denied`), or `null`. */
  readonly error: BayouError | null;
}

/** The part of `BayouClient` presence uses. */
export interface PresenceClient {
  subscribe(
    channel: string,
    handler: (message: Message) => void,
  ): { unsubscribe(): void; ready: Promise<void> };
  request<T>(channel: string, data: unknown): Promise<T>;
  on(event: 'state', listener: (state: string, previous: string) => void): () => void;
  on(event: 'subscription', listener: (channel: string, status: string) => void): () => void;
}

const EMPTY: PresenceSnapshot = Object.freeze({ members: Object.freeze([]), ready: false, error: null });

export class Presence {
  private readonly listeners = new Set<() => void>();
  private readonly changeListeners = new Set<(event: PresenceEvent) => void>();
  private snapshot: PresenceSnapshot = EMPTY;
  private byId = new Map<string, PresenceMember>();
  /** Events that arrived while a list request was out: applied over its answer. */
  private buffered: PresenceEvent[] | null = null;
  private stop: (() => void) | null = null;
  private generation = 0;

  constructor(
    private readonly client: PresenceClient,
    readonly channel: string,
  ) {}

  /** The members now, asked once (no following). */
  async members(): Promise<PresenceMember[]> {
    const answer = await this.client.request<{ members: PresenceMember[] }>(PRESENCE_SERVICE, {
      channel: this.channel,
    });
    return answer.members;
  }

  /** Calls `listener` with every join and leave while it is subscribed. */
  onChange(listener: (event: PresenceEvent) => void): () => void {
    this.changeListeners.add(listener);
    const off = this.subscribe(() => undefined);
    return () => {
      this.changeListeners.delete(listener);
      off();
    };
  }

  /** The first listener starts following the channel's presence, the last stops. */
  subscribe(listener: () => void): () => void {
    // A wrapper per call, so that the same function subscribed twice counts twice.
    const own = (): void => listener();
    this.listeners.add(own);
    if (this.listeners.size === 1) this.start();
    return () => {
      if (this.listeners.delete(own) && this.listeners.size === 0) this.end();
    };
  }

  getSnapshot(): PresenceSnapshot {
    return this.snapshot;
  }

  private start(): void {
    const generation = ++this.generation;
    const sub = this.client.subscribe(presenceChannel(this.channel), (m) =>
      this.event(m.data as PresenceEvent),
    );
    const follow = presenceChannel(this.channel);
    const offState = this.client.on('state', (state, previous) => {
      // Members may have come and gone while this client was away.
      if (state === 'connected' && previous === 'reconnecting') this.refresh(generation);
    });
    // After a new session (a server restart), the list is asked again once the follow is
    // subscribed again: joins from then on arrive as events, earlier ones are in the list.
    let resubscribing = false;
    const offStatus = this.client.on('subscription', (channel, status) => {
      if (channel !== follow) return;
      if (status === 'recovering') resubscribing = true;
      else if (resubscribing && (status === 'live' || status === 'gap')) {
        resubscribing = false;
        this.refresh(generation);
      }
    });
    sub.ready.then(
      () => this.refresh(generation),
      (error: BayouError) => this.failed(generation, error),
    );
    this.stop = () => {
      offState();
      offStatus();
      sub.unsubscribe();
    };
  }

  private end(): void {
    this.generation++;
    this.stop?.();
    this.stop = null;
    this.byId = new Map();
    this.buffered = null;
    this.snapshot = EMPTY;
  }

  private refresh(generation: number): void {
    if (generation !== this.generation) return;
    this.buffered = [];
    this.members().then(
      (members) => {
        if (generation !== this.generation) return;
        this.byId = new Map(members.map((m) => [m.clientId, m]));
        const missed = this.buffered ?? [];
        this.buffered = null;
        for (const e of missed) this.apply(e);
        this.publish(true, null);
      },
      (error: BayouError) => this.failed(generation, error),
    );
  }

  private failed(generation: number, error: BayouError): void {
    if (generation !== this.generation) return;
    this.buffered = null;
    this.publish(false, error);
  }

  private event(e: PresenceEvent): void {
    if (e === null || typeof e !== 'object' || e.member === undefined) return;
    for (const l of this.changeListeners) l(e);
    if (this.buffered !== null) {
      this.buffered.push(e);
      return;
    }
    this.apply(e);
    if (this.snapshot.ready) this.publish(true, null);
  }

  private apply(e: PresenceEvent): void {
    if (e.action === 'join') this.byId.set(e.member.clientId, e.member);
    else if (e.action === 'leave') this.byId.delete(e.member.clientId);
  }

  private publish(ready: boolean, error: BayouError | null): void {
    this.snapshot = Object.freeze({ members: Object.freeze([...this.byId.values()]), ready, error });
    for (const l of this.listeners) l();
  }
}
