/** Bayeux 1.0 message shapes, as CometD and Faye put them on the wire. */

export type ReconnectAdvice = 'retry' | 'handshake' | 'none';

export interface Advice {
  reconnect?: ReconnectAdvice;
  /** Milliseconds to wait before the next connect (or handshake). */
  interval?: number;
  /** Milliseconds the server holds a long-poll `/meta/connect`. */
  timeout?: number;
  /** Milliseconds after a connect ends before the server expires the session. */
  maxInterval?: number;
  /** Set when one browser holds more long-polls than the server allows. */
  'multiple-clients'?: boolean;
  [key: string]: unknown;
}

export type Ext = Record<string, unknown>;

export type ConnectionType = 'websocket' | 'long-polling' | (string & {});

/** A message as any Bayeux peer may send it; every field is optional on the wire. */
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
  supportedConnectionTypes?: ConnectionType[];
  connectionType?: ConnectionType;
  [key: string]: unknown;
}

export interface HandshakeRequest extends Message {
  channel: '/meta/handshake';
  version: string;
  supportedConnectionTypes: ConnectionType[];
}

export interface Reply extends Message {
  successful: boolean;
}

/** Every meta channel starts with it; a message on one is a protocol message, not data. */
export const META_PREFIX = '/meta/';
export const META_HANDSHAKE = '/meta/handshake';
export const META_CONNECT = '/meta/connect';
export const META_SUBSCRIBE = '/meta/subscribe';
export const META_UNSUBSCRIBE = '/meta/unsubscribe';
export const META_DISCONNECT = '/meta/disconnect';

export const BAYEUX_VERSION = '1.0';

export type MetaChannel =
  | typeof META_HANDSHAKE
  | typeof META_CONNECT
  | typeof META_SUBSCRIBE
  | typeof META_UNSUBSCRIBE
  | typeof META_DISCONNECT;

/** Whether `channel` is a meta channel (`/meta/…`), known or not. */
export function isMetaChannel(channel: string): boolean {
  return channel.startsWith(META_PREFIX);
}

export const META_CHANNELS: ReadonlySet<string> = new Set<string>([
  META_HANDSHAKE,
  META_CONNECT,
  META_SUBSCRIBE,
  META_UNSUBSCRIBE,
  META_DISCONNECT,
]);
