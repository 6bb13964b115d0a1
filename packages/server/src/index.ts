export { type AdminConsoleOptions, adminConsole } from './admin/admin-console.js';
export {
  type Action,
  type AuthHooks,
  type AuthOptions,
  authExpiresAt,
  type ChannelPermissions,
  type ChannelRule,
  covers,
  createAuthHooks,
  createChannelPolicy,
  createTokenVerifier,
  type TokenAuth,
  type TokenOptions,
  tokenOf,
  type Who,
} from './auth/index.js';
export type { Extension, Reply } from './bayeux/extensions.js';
export { BayouApp, type BayouStats } from './bayou-app.js';
export {
  type BayouConfig,
  type BuiltServer,
  buildServer,
  defineConfig,
  FLAGS,
  type LogFormat,
  resolveCli,
} from './config/index.js';
export { type BayouServer, type CreateServerOptions, createServer } from './create-server.js';
export type {
  Broker,
  Engine,
  EngineNode,
  History,
  HistoryPolicy,
  Leases,
  LostMember,
  MaybePromise,
  Presence,
  PresenceMember,
  Publication,
  Recovery,
  SessionDirectory,
  StreamPosition,
} from './engine/engine.js';
export { MemoryBus } from './engine/memory/memory-bus.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine/memory/memory-engine.js';
export { RedisEngine, type RedisEngineOptions, type RedisEngineStats } from './engine/redis/index.js';
export {
  BayeuxReplyError,
  BayouConfigError,
  BayouEngineError,
  BayouError,
  type ConfigErrorCode,
  type ErrorCode,
  ErrorCodes,
  HandshakeDeniedError,
  type TokenProblem,
} from './errors.js';
export { type BayouPluginOptions, bayou, bayou as default } from './http/plugin.js';
export { keyMatches, type PublishApiOptions, publishApi } from './http/publish-api.js';
export { type ServerApiOptions, serverApi } from './http/server-api.js';
export type { BayouEvents, ServiceContext, ServiceHandler } from './kernel/events.js';
export type { ForwardRequest, ForwardResponse } from './kernel/node-link.js';
export type { PresenceView } from './kernel/presence-tracker.js';
export {
  defaultLimits,
  Limiter,
  type LimiterStats,
  type LimitOptions,
  type LimitReply,
  resolveLimits,
} from './limits/index.js';
export {
  type AuthenticateHook,
  type BayouOptions,
  type ChannelHook,
  defaultOptions,
  type RequestInfo,
  type ResolvedOptions,
  resolveOptions,
  type TransportName,
} from './options.js';
export type { ProxyEndpoint, ProxyHookName, ProxyOptions } from './proxy/proxy-options.js';
export { RandomIds } from './random-ids.js';
export { DEMO_PATTERN, type DemoFeedOptions, demoSubject, demoSymbol } from './records/demo-feed.js';
export type { Provider } from './records/provider-registry.js';
export type { RecordPattern, RecordRequest } from './records/record-options.js';
export { tuneRuntime } from './runtime-tuning.js';
export type {
  DeliveryMode,
  EnqueueHook,
  ExtensionSession,
  PublicationDelivery,
  ServerSession,
} from './session/session.js';
export type { SessionState } from './session/session-lifecycle.js';
export {
  type CorsAnswer,
  checkAllowedOrigins,
  corsFor,
  originAllowed,
} from './transports/request-info.js';
export type { CarrierKind, RemovalReason } from './types.js';
export { TRANSPORT_NAMES } from './types.js';
export type { WebhookOptions } from './webhooks/webhook-options.js';
export {
  signature as webhookSignature,
  type WebhookEvent,
  type WebhookEventType,
} from './webhooks/webhook-sender.js';
