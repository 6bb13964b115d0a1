/** What the presence suites share: signed tokens and channel rules with presence on. */
import { SignJWT } from 'jose';

const secret = 'presence-test-secret-at-least-32-chars!';
const soon = (): number => Math.floor(Date.now() / 1000) + 600;

/** A token for `claims` (`sub`, `bayou.info`…), valid for ten minutes. */
export function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ exp: soon(), ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));
}

/**
 * Tokens, presence on `/chat/*` for everyone, `/secret/*` readable by nobody. Servers in
 * these suites also trust client sessions: `@bayou/client` long-polling in Node keeps no cookie.
 */
export const presenceAuth = {
  tokens: { secret },
  channels: {
    rules: [
      { pattern: '/chat/*', presence: true, publish: 'authenticated' as const },
      { pattern: '/secret/*', subscribe: 'nobody' as const, presence: true },
    ],
  },
};
