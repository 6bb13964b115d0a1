/** What `client.on(event, listener)` listens to. */

import type { BayouError } from './errors.js';
import type { GapInfo } from './recovery.js';
import type { ConnectionState } from './state.js';
import type { SubscriptionStatus } from './subscriptions.js';
import type { TransportReason } from './transport-selector.js';

export interface ClientEvents {
  /** The connection state changed. */
  state: (state: ConnectionState, previous: ConnectionState) => void;
  /**
   * The transport in use changed (`previous` is `null` for the first one); `reason` says
   * why this one and not a more preferred one (see `TransportReason`).
   */
  transport: (transport: string, previous: string | null, reason: TransportReason) => void;
  /** A failure no promise reports: the client stopped, a resubscribe refused, an attempt failed. */
  error: (error: BayouError) => void;
  /**
   * After a new session the server could not recover what `info.channel` missed (history
   * trimmed or expired, or lost with a restart), or the server lost messages on that
   * subscription itself (its node's connection to Redis was silent or cut, and the channel
   * keeps no history: `info.to` is null): re-fetch the state that channel feeds.
   */
  gap: (info: GapInfo) => void;
  /** A subscription's status changed (see `Subscription.status`). */
  subscription: (channel: string, status: SubscriptionStatus) => void;
}
