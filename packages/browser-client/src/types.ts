/**
 * The Bayeux message shapes the client sends and receives. They mirror `@bayou/protocol`'s
 * (a type test keeps them in step) but live here so that the published `.d.ts` files
 * need no other package.
 */

export type ReconnectAdvice = 'retry' | 'handshake' | 'none';

export interface Advice {
  reconnect?: ReconnectAdvice;
  /** Milliseconds to wait before the next connect (or handshake). */
  interval?: number;
  /** Milliseconds the server holds a `/meta/connect`. */
  timeout?: number;
  maxInterval?: number;
  /** Set when this browser already holds a long-poll in another tab. */
  'multiple-clients'?: boolean;
  [key: string]: unknown;
}

export type Ext = Record<string, unknown>;

/** One Bayeux message; every field but `channel` is optional on the wire. */
export interface Message {
  channel: string;
  id?: string;
  clientId?: string;
  data?: unknown;
  ext?: Ext;
  advice?: Advice;
  successful?: boolean;
  error?: string;
  subscription?: string | string[];
  version?: string;
  minimumVersion?: string;
  supportedConnectionTypes?: string[];
  connectionType?: string;
  [key: string]: unknown;
}

/**
 * Runs on every message on its way out (`outgoing`) or in (`incoming`). Return the
 * message (changed or not) to pass it on, or `null` to drop it.
 */
export interface Extension {
  incoming?(message: Message): Message | null;
  outgoing?(message: Message): Message | null;
}
