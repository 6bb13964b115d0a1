/**
 * Verifies connection tokens (JWT) with `jose`: HS256 with a shared secret, or RS256 /
 * ES256 (and the other asymmetric JWS algorithms) with keys from a JWKS URL, fetched on
 * first use, cached and refreshed when a token names an unknown `kid`. Unsigned
 * (`alg: none`) tokens, wrong signatures, algorithms other than the configured ones and
 * malformed claims are refused; an expired token is told apart so the client can refresh it.
 */
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { HandshakeDeniedError } from '../errors.js';
import { scopedInvalid } from '../option-errors.js';

export interface TokenOptions {
  /** Shared secret for HS256 tokens (at least 32 characters). Exclusive with `jwksUrl`. */
  secret?: string;
  /** URL of a JSON Web Key Set for RS256/ES256/PS256/EdDSA tokens. Exclusive with `secret`. */
  jwksUrl?: string;
  /** Required `iss` claim, if set. Default: not checked. */
  issuer?: string;
  /** Required `aud` claim, if set. Default: not checked. */
  audience?: string;
  /** Seconds of clock skew tolerated on `exp` and `nbf`. Default `5`. */
  clockTolerance?: number;
  /** Refuse tokens without `exp`. Default `true`. */
  requireExp?: boolean;
  /** Seconds a fetched JWKS is used before it is fetched again. Default `600`. */
  jwksCacheMaxAge?: number;
  /** Seconds between two JWKS fetches caused by unknown `kid`s. Default `30`. */
  jwksCooldown?: number;
  /** Milliseconds a JWKS fetch may take. Default `5000`. */
  jwksTimeout?: number;
}

/** The claims Bayou reads, checked for type. */
export interface TokenClaims {
  /** The user. */
  sub: string;
  /** Expiry, seconds since the epoch; `undefined` when the token has none. */
  exp: number | undefined;
  /** Patterns this session may subscribe to, from the `bayou.subscribe` claim. */
  subscribe: string[] | undefined;
  /** Patterns this session may publish to, from the `bayou.publish` claim. */
  publish: string[] | undefined;
  /** The whole verified payload, for `{ claim }` rules and hooks. */
  payload: JWTPayload;
}

export interface TokenVerifier {
  /** Resolves to the claims or rejects with a `HandshakeDeniedError`. */
  verify(token: unknown): Promise<TokenClaims>;
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** A JWT is three base64url parts; anything far larger than a header is not a connection token. */
const MAX_TOKEN_LENGTH = 8192;

const invalid: (name: string, expected: string) => never = scopedInvalid('tokens');

export function createTokenVerifier(options: TokenOptions): TokenVerifier {
  const { secret, jwksUrl } = options;
  if ((secret === undefined) === (jwksUrl === undefined)) invalid('secret', 'set, or jwksUrl, but not both');
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < 32))
    invalid('secret', 'a string of at least 32 characters (HS256 needs 256 bits)');
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (secret !== undefined) {
    key = new TextEncoder().encode(secret);
    algorithms = ['HS256'];
  } else {
    let url: URL;
    try {
      url = new URL(jwksUrl as string);
    } catch {
      invalid('jwksUrl', 'an absolute http(s) URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') invalid('jwksUrl', 'an http(s) URL');
    key = createRemoteJWKSet(url, {
      cacheMaxAge: (options.jwksCacheMaxAge ?? 600) * 1000,
      cooldownDuration: (options.jwksCooldown ?? 30) * 1000,
      timeoutDuration: options.jwksTimeout ?? 5000,
    });
    algorithms = ASYMMETRIC;
  }
  const requireExp = options.requireExp ?? true;
  const verifyOptions = {
    algorithms,
    clockTolerance: options.clockTolerance ?? 5,
    ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    ...(options.audience !== undefined ? { audience: options.audience } : {}),
    ...(requireExp ? { requiredClaims: ['exp'] } : {}),
  };

  return {
    async verify(token) {
      if (token === undefined || token === null || token === '')
        throw new HandshakeDeniedError('missing', 'no token in ext.auth.token');
      if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH)
        throw new HandshakeDeniedError('malformed', 'the token is not a compact JWT');
      let payload: JWTPayload;
      try {
        // `key` is a secret or a key-set getter; jose's overloads take either.
        payload = (await jwtVerify(token, key as Uint8Array, verifyOptions)).payload;
      } catch (err) {
        throw tokenError(err);
      }
      return readClaims(payload);
    },
  };
}

function tokenError(err: unknown): HandshakeDeniedError {
  if (err instanceof errors.JWTExpired) return new HandshakeDeniedError('expired', 'the token has expired');
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return new HandshakeDeniedError('invalid', `the key set could not be used (${(err as Error).message})`);
  }
  if (err instanceof errors.JOSEError) {
    return new HandshakeDeniedError('invalid', `${err.code}: ${err.message}`);
  }
  return new HandshakeDeniedError('invalid', (err as Error)?.message ?? 'verification failed');
}

function patternList(value: unknown, name: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string'))
    throw new HandshakeDeniedError('invalid', `claim bayou.${name} must be an array of channel patterns`);
  return value as string[];
}

function readClaims(payload: JWTPayload): TokenClaims {
  if (typeof payload.sub !== 'string' || payload.sub === '')
    throw new HandshakeDeniedError('invalid', 'the token has no "sub" claim');
  const bayou = (payload as { bayou?: unknown }).bayou;
  if (bayou !== undefined && (bayou === null || typeof bayou !== 'object' || Array.isArray(bayou)))
    throw new HandshakeDeniedError('invalid', 'claim "bayou" must be an object');
  const b = (bayou ?? {}) as { subscribe?: unknown; publish?: unknown };
  return {
    sub: payload.sub,
    exp: payload.exp,
    subscribe: patternList(b.subscribe, 'subscribe'),
    publish: patternList(b.publish, 'publish'),
    payload,
  };
}
