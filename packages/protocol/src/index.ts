export {
  type ChannelInfo,
  type ChannelKind,
  channelKind,
  expandChannel,
  isValidChannel,
  isWildcard,
  matches,
  parseChannel,
} from './channel.js';
export {
  type BayeuxErrorName,
  BayeuxErrors,
  formatError,
  type ParsedError,
  parseError,
} from './errors.js';
export {
  type Advice,
  BAYEUX_VERSION,
  type ConnectionType,
  type Ext,
  type HandshakeRequest,
  META_CHANNELS,
  META_CONNECT,
  META_DISCONNECT,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  META_UNSUBSCRIBE,
  type Message,
  type MetaChannel,
  type ReconnectAdvice,
  type Reply,
} from './message.js';
export {
  type DecodeResult,
  decodeBatch,
  jsonDepthExceeds,
  MAX_JSON_DEPTH,
  type ValidationResult,
  validateMessage,
} from './validate.js';
