/**
 * Refreshing the connection token before it expires. The `token` option's function is
 * called for every handshake; when the token is a JWT with an `exp` claim, it is called
 * again a margin before that expiry, and the new token rides on a `/meta/connect`
 * (`ext.auth.token`), which the server takes as the session's new token: the session
 * lives on instead of being ended at expiry and handshaking again. A held connect is
 * renewed to carry it at once. Nothing is verified here (the server does that); the
 * payload is only read for `exp`.
 */

export type TokenSource = string | (() => string | Promise<string>);

/** The `exp` of a JWT in ms since the epoch, or null when it is no JWT or has none. */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (payload === undefined || payload === '') return null;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const exp = (JSON.parse(new TextDecoder().decode(bytes)) as { exp?: unknown } | null)?.exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * When to ask for a new token: `margin` ms before `expiresAt`, but never later than half
 * way there, so short-lived tokens are refreshed with time to spare.
 */
export function refreshDelay(expiresAt: number, now: number, margin: number): number {
  const remaining = expiresAt - now;
  return Math.max(0, remaining - Math.min(margin, remaining / 2));
}

export class TokenRefresh {
  /** A refreshed token the server has not accepted yet: the next `/meta/connect` carries it. */
  pending: string | null = null;
  private expiresAt: number | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by `stop` and each handshake, so a refresh started before cannot act after. */
  private generation = 0;

  /**
   * @param source the `token` option
   * @param margin ms before expiry to refresh
   * @param renew called with a new pending token: send a `/meta/connect` carrying it soon
   */
  constructor(
    private readonly source: TokenSource | undefined,
    private readonly margin: number,
    private readonly renew: () => void,
  ) {}

  /** The token a handshake sends (undefined without the option); a new session starts from it. */
  async forHandshake(): Promise<string | undefined> {
    const source = this.source;
    if (source === undefined) return undefined;
    this.generation++;
    this.pending = null;
    const token = typeof source === 'function' ? await source() : source;
    this.expiresAt = tokenExpiry(token);
    return token;
  }

  /** Connected: schedule the refresh, when the token expires and can be replaced. */
  start(): void {
    this.stop();
    if (typeof this.source !== 'function' || this.expiresAt === null) return;
    const generation = this.generation;
    const delay = refreshDelay(this.expiresAt, Date.now(), this.margin);
    this.timer = setTimeout(() => void this.refresh(generation), delay);
  }

  /** Not connected (or stopped): no refresh until the next `start`. */
  stop(): void {
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A `/meta/connect` carrying `token` succeeded: the server has it. */
  accepted(token: string): void {
    if (this.pending === token) this.pending = null;
  }

  private async refresh(generation: number): Promise<void> {
    this.timer = undefined;
    const previous = this.expiresAt;
    let token: string;
    try {
      token = await (this.source as () => string | Promise<string>)();
    } catch {
      // No new token for now: the session lasts until the old one expires, then the
      // server asks for a handshake, which asks the function again.
      return;
    }
    if (generation !== this.generation) return;
    const expiresAt = tokenExpiry(token);
    // The same token again (a cache that did not renew it) is not worth sending.
    if (expiresAt === null || (previous !== null && expiresAt <= previous)) return;
    this.pending = token;
    this.expiresAt = expiresAt;
    this.renew();
    this.start();
  }
}
