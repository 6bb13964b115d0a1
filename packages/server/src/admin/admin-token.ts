/**
 * The console's credential: the operator's password, exchanged at `POST /admin/login` for
 * a short-lived token `<expiry ms>.<HMAC-SHA256>` that the page sends as a cookie and in
 * its Bayeux handshake. The HMAC key derives from the password, so every node of a
 * cluster started with the same password accepts a token any of them issued. Without a
 * password (loopback only) the key is random per process and any password is accepted.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a token lives. */
export const TOKEN_TTL_MS = 8 * 3600_000;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export class AdminCredential {
  private readonly passwordDigest: Buffer | null;
  private readonly key: Buffer;

  constructor(password: string | undefined) {
    this.passwordDigest = password === undefined ? null : digest(password);
    this.key = password === undefined ? randomBytes(32) : digest(`bayou-admin-token:${password}`);
  }

  /** Compares digests in constant time, so the time taken says nothing of the password. */
  passwordMatches(given: unknown): boolean {
    if (this.passwordDigest === null) return true;
    if (typeof given !== 'string') return false;
    return timingSafeEqual(digest(given), this.passwordDigest);
  }

  issue(now = Date.now()): string {
    const expiry = String(now + TOKEN_TTL_MS);
    return `${expiry}.${this.sign(expiry)}`;
  }

  valid(token: unknown, now = Date.now()): boolean {
    if (typeof token !== 'string' || token.length > 200) return false;
    const dot = token.indexOf('.');
    const expiry = token.slice(0, dot);
    if (dot < 1 || !/^\d+$/.test(expiry) || Number(expiry) <= now) return false;
    const given = Buffer.from(token.slice(dot + 1));
    const wanted = Buffer.from(this.sign(expiry));
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }

  private sign(expiry: string): string {
    return createHmac('sha256', this.key).update(expiry).digest('base64url');
  }
}
