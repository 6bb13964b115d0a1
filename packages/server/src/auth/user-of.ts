import type { ServerSession } from '../session/session.js';

/** The user a session stands for: `auth.user` (an `authenticate` hook's, a proxy connect's), else its token's `sub`. */
export function userOf(session: ServerSession): string | undefined {
  const auth = session.auth;
  const user = auth?.user ?? auth?.sub;
  return typeof user === 'string' ? user : undefined;
}
