/**
 * The flags of `bayou start` for tokens, the publish API key, TLS and the trusted proxy.
 * Part of the one flag table (`FLAGS` in `flags.ts`), in its place there.
 */
import { parseTrustProxy } from '../http/trust-proxy.js';
import type { FlagSpec } from './flag-spec.js';

export const SECURITY_FLAGS: readonly FlagSpec[] = [
  {
    flag: 'jwt-secret',
    env: ['BAYOU_JWT_SECRET'],
    key: 'tokens.secret',
    kind: 'string',
    value: '<secret>',
    help: 'verify HS256 handshake tokens with this secret (≥ 32 characters; prefer the env variable)',
    default: 'none (no tokens)',
    secret: true,
  },
  {
    flag: 'jwks-url',
    env: ['BAYOU_JWKS_URL'],
    key: 'tokens.jwksUrl',
    kind: 'string',
    value: '<url>',
    help: 'verify RS256/ES256 handshake tokens with the keys at this JWKS URL',
    default: 'none',
  },
  {
    flag: 'jwt-issuer',
    env: ['BAYOU_JWT_ISSUER'],
    key: 'tokens.issuer',
    kind: 'string',
    value: '<iss>',
    help: 'required "iss" claim of tokens',
    default: 'not checked',
  },
  {
    flag: 'jwt-audience',
    env: ['BAYOU_JWT_AUDIENCE'],
    key: 'tokens.audience',
    kind: 'string',
    value: '<aud>',
    help: 'required "aud" claim of tokens',
    default: 'not checked',
  },
  {
    flag: 'allow-anonymous',
    env: ['BAYOU_ALLOW_ANONYMOUS'],
    key: 'allowAnonymous',
    kind: 'bool',
    help: "with tokens on, accept handshakes without a token (they pass 'anyone' rules only)",
    default: 'false',
  },
  {
    flag: 'api-key',
    env: ['BAYOU_API_KEY'],
    key: 'apiKey',
    kind: 'string',
    value: '<key>',
    help: 'enable POST /api/publish for callers presenting "Authorization: Bearer <key>" (≥ 16 characters)',
    default: 'none (the API answers 404)',
    secret: true,
  },
  {
    flag: 'tls-key',
    env: ['BAYOU_TLS_KEY'],
    key: 'tls.key',
    kind: 'string',
    value: '<file>',
    help: 'PEM key: serve https/wss (with --tls-cert)',
    default: 'none',
  },
  {
    flag: 'tls-cert',
    env: ['BAYOU_TLS_CERT'],
    key: 'tls.cert',
    kind: 'string',
    value: '<file>',
    help: 'PEM certificate chain',
    default: 'none',
  },
  {
    flag: 'trust-proxy',
    env: ['BAYOU_TRUST_PROXY'],
    key: 'trustProxy',
    kind: 'string',
    value: '<list>',
    help: "peers trusted for X-Forwarded-For/-Proto (the client's IP for limits, Secure cookies): the balancer's addresses or CIDRs, loopback, linklocal, uniquelocal (comma-separated), a hop count, or true (any peer)",
    default: 'none (the socket address is the client)',
    parse: parseTrustProxy,
  },
];
