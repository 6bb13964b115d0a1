/** What the core client needs of the delta decoder (`@bayou/client/deltas`), by type only. */
import type { Extension } from './types.js';

/** The decoder of one client: an extension keeping the last message of each delta channel. */
export interface DeltaDecoder extends Extension {
  /** The channels that want deltas, each with its last message (`null`: the next comes whole). */
  readonly last: Map<string, [unknown, unknown] | null>;
}

/**
 * Makes a client's decoder. To subscribe to a channel again, it marks the channel's entry
 * unconfirmed and calls `resume`, which sends the pending subscribes if connected (else the
 * next connection does).
 */
export type DeltaSupport = (
  subscriptions: { get(channel: string): { confirmed: boolean } | undefined },
  resume: () => void,
) => DeltaDecoder;

/** Options of `client.subscribe`. */
export interface SubscribeOptions {
  /**
   * Ask the server for deltas on this (concrete) channel: less to carry when messages change
   * a few fields of a large object. Handlers still get whole messages. Needs the `deltas`
   * option. Default `false`.
   */
  delta?: boolean;
}
