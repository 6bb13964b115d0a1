export { BayouClient, type ClientEvents } from './client.js';
export type { DeltaDecoder, DeltaSupport, SubscribeOptions } from './delta-support.js';
export { type BayeuxError, BayouError, type ErrorCode, ErrorCodes } from './errors.js';
export type { BayouClientOptions } from './options.js';
export type {
  Presence,
  PresenceClient,
  PresenceEvent,
  PresenceMember,
  PresenceSnapshot,
} from './presence.js';
export type { RecordOptions } from './records/record-codec.js';
export type { RecordImage, RecordListener, RecordStore } from './records/record-store.js';
export type { RecordCallback, RecordHandle } from './records/records.js';
export type { GapInfo, Position } from './recovery.js';
export type { ConnectionState } from './state.js';
export type { MessageHandler, Subscription, SubscriptionStatus } from './subscriptions.js';
export type { TransportReason } from './transport-selector.js';
export { longPolling } from './transports/long-polling.js';
export { streaming } from './transports/streaming.js';
export type {
  FetchFunction,
  FetchResponseLike,
  StreamReaderLike,
  Transport,
  TransportContext,
  TransportFactory,
  WebSocketConstructor,
  WebSocketLike,
} from './transports/transport.js';
export { websocket } from './transports/websocket.js';
export type { Advice, Ext, Extension, Message, ReconnectAdvice } from './types.js';
