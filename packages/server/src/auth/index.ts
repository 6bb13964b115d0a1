export {
  type AuthHooks,
  type AuthOptions,
  authExpiresAt,
  createAuthHooks,
  type TokenAuth,
  tokenOf,
} from './auth-hooks.js';
export {
  type Action,
  type AuthView,
  type ChannelPermissions,
  type ChannelPolicy,
  type ChannelRule,
  checkChannelPermissions,
  covers,
  createChannelPolicy,
  presencePatterns,
  type Who,
} from './channel-rules.js';
export {
  createTokenVerifier,
  type TokenClaims,
  type TokenOptions,
  type TokenVerifier,
} from './token-verifier.js';
