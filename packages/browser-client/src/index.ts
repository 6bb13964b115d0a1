export { BayouClient, type ClientEvents } from './client.js';
export { type BayeuxError, BayouError, type ErrorCode, ErrorCodes } from './errors.js';
export type { BayouClientOptions } from './options.js';
export type { ConnectionState } from './state.js';
export type { MessageHandler, Subscription } from './subscriptions.js';
export { longPolling } from './transports/long-polling.js';
export type {
  FetchFunction,
  FetchResponseLike,
  Transport,
  TransportContext,
  TransportFactory,
  WebSocketConstructor,
  WebSocketLike,
} from './transports/transport.js';
export { websocket } from './transports/websocket.js';
export type { Advice, Ext, Extension, Message, ReconnectAdvice } from './types.js';
