/**
 * `POST /chat/token` with `{ "name": "ada" }` → `{ "token": "<JWT>" }`: the chat's stand-in
 * for a login. It signs an HS256 token (`sub` = the name, `exp` = now + ttl) with the
 * secret the server verifies handshakes with, as a real application would after checking
 * a password. Without a secret (the open demo) it answers 204 No Content — no token is
 * needed, the page handshakes with its name alone — not an error a browser logs in red.
 */
import type { BayouServer } from '@bayou/server';
import { SignJWT } from 'jose';
import { nameProblem, normalizeName } from '../shared/chat-protocol.js';

export const TOKEN_PATH = '/chat/token';

export function tokenRoute(app: BayouServer['app'], secret: string | undefined, ttlSeconds: number): void {
  const key = secret === undefined ? null : new TextEncoder().encode(secret);
  app.post(TOKEN_PATH, { bodyLimit: 1024 }, async (request, reply) => {
    if (key === null) return reply.code(204).header('x-chat-tokens', 'off').send();
    const body = request.body as { name?: unknown } | null;
    const name = normalizeName(body?.name);
    if (name === null) return reply.code(400).send({ error: `name: ${nameProblem(body?.name)}` });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(name)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(key);
    return { token, expiresIn: ttlSeconds };
  });
}
