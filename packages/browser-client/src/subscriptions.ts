/**
 * The client's subscriptions: one server subscription per channel however many handlers
 * share it, what the server has confirmed in the current session, and what must be sent
 * (subscribe or unsubscribe) when a connection is (re)established.
 */
import { expandChannel } from '@bayou/protocol';
import type { BayouError } from './errors.js';
import type { Message } from './types.js';

export type MessageHandler = (message: Message) => void;

/**
 * Where a subscription stands:
 * - `pending`: the first subscribe has not been answered yet;
 * - `live`: subscribed, and as far as the client knows no message was missed;
 * - `recovering`: a new session (re-handshake, server restart): subscribing again, with
 *   the last position when the server keeps history; missed messages follow the reply;
 * - `gap`: the last resubscribe could not recover what was missed (the `gap` event said
 *   which range), or the server said since that it lost messages for it (`/meta/gap`);
 *   live again since, but the app should re-fetch its state. It stays until the next
 *   resubscribe;
 * - `failed`: the server refused the subscription.
 */
export type SubscriptionStatus = 'pending' | 'live' | 'recovering' | 'gap' | 'failed';

/** What `client.subscribe()` returns. */
export interface Subscription {
  readonly channel: string;
  /** The channel's status, shared by every handler on it; `client.on('subscription')` reports changes. */
  readonly status: SubscriptionStatus;
  /** Settled by the server's reply to the subscribe (rejects with a `BayouError`). */
  readonly ready: Promise<void>;
  /** Removes this handler; the last one on a channel unsubscribes from the server. */
  unsubscribe(): void;
}

interface Waiter {
  resolve(): void;
  reject(error: BayouError): void;
}

/** One channel as the server sees it. */
export interface ChannelEntry {
  readonly channel: string;
  readonly handlers: Set<MessageHandler>;
  /** The server acknowledged the subscribe in the current session. */
  confirmed: boolean;
  /** A subscribe is on its way. */
  inFlight: boolean;
  status: SubscriptionStatus;
  waiters: Waiter[];
}

export class SubscriptionRegistry {
  private readonly entries = new Map<string, ChannelEntry>();
  /** Channels the server may still hold for this session although no handler wants them. */
  private readonly stale = new Set<string>();

  /** Adds a handler; returns the entry and a promise settled when the channel is confirmed. */
  add(channel: string, handler: MessageHandler): { entry: ChannelEntry; ready: Promise<void> } {
    let entry = this.entries.get(channel);
    if (!entry) {
      // A channel still `stale` stays so: the server may hold the old subscription, and
      // the unsubscribe sent before the new subscribe makes it start afresh (a record
      // subject sends a new snapshot; a duplicate subscribe would be ignored).
      entry = {
        channel,
        handlers: new Set(),
        confirmed: false,
        inFlight: false,
        status: 'pending',
        waiters: [],
      };
      this.entries.set(channel, entry);
    }
    entry.handlers.add(handler);
    const current = entry;
    const ready = current.confirmed
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => current.waiters.push({ resolve, reject }));
    // An app that never awaits `ready` must not see an unhandled rejection.
    ready.catch(() => {});
    return { entry, ready };
  }

  /** Removes a handler; returns true when the server subscription is no longer wanted. */
  remove(channel: string, handler: MessageHandler): boolean {
    const entry = this.entries.get(channel);
    if (!entry?.handlers.delete(handler) || entry.handlers.size > 0) return false;
    this.entries.delete(channel);
    if (entry.confirmed || entry.inFlight) this.stale.add(channel);
    return true;
  }

  get(channel: string): ChannelEntry | undefined {
    return this.entries.get(channel);
  }

  /** The server replied to a subscribe for `entry`. */
  confirm(entry: ChannelEntry): void {
    entry.inFlight = false;
    entry.confirmed = true;
    for (const w of entry.waiters.splice(0)) w.resolve();
  }

  /** The server refused `entry`: its handlers are dropped. */
  refuse(entry: ChannelEntry, error: BayouError): void {
    entry.inFlight = false;
    if (this.entries.get(entry.channel) === entry) this.entries.delete(entry.channel);
    for (const w of entry.waiters.splice(0)) w.reject(error);
  }

  /** A subscribe was lost with its transport: it will be sent again. */
  retry(entry: ChannelEntry): void {
    entry.inFlight = false;
  }

  /** The unsubscribe for `channel` went out (or its session is gone). */
  forget(channel: string): void {
    this.stale.delete(channel);
  }

  /** A new session: the server holds nothing for us any more; returns every entry. */
  resetSession(): ChannelEntry[] {
    this.stale.clear();
    for (const entry of this.entries.values()) {
      entry.confirmed = false;
      entry.inFlight = false;
    }
    return [...this.entries.values()];
  }

  /** What to send on a fresh connection: stale channels to drop, channels to subscribe. */
  pending(): { unsubscribe: string[]; subscribe: ChannelEntry[] } {
    const subscribe = [...this.entries.values()].filter((e) => !e.confirmed && !e.inFlight);
    return { unsubscribe: [...this.stale], subscribe };
  }

  /** The client stopped: unsettled `ready` promises reject; subscriptions stay for the next connect. */
  rejectWaiters(error: BayouError): void {
    for (const entry of this.entries.values()) {
      for (const w of entry.waiters.splice(0)) w.reject(error);
    }
  }

  /** Hands a delivered message to every handler whose channel or pattern matches it. */
  dispatch(message: Message): void {
    for (const name of expandChannel(message.channel)) {
      const entry = this.entries.get(name);
      if (entry) handOut(entry, message);
    }
  }
}

/** Calls each handler of `entry` with `message`; one that throws is reported later, apart. */
export function handOut(entry: ChannelEntry, message: Message): void {
  for (const handler of [...entry.handlers]) {
    try {
      handler(message);
    } catch (err) {
      setTimeout(() => {
        throw err;
      }, 0);
    }
  }
}
