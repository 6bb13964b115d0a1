/**
 * `npm start` for the chat demo: serves it on PORT (default 8080) and HOST, prints the URL
 * and how open it is, and shuts down gracefully on SIGINT/SIGTERM so clients reconnect to
 * wherever it comes back.
 *
 * Without `BAYOU_JWT_SECRET` it is an open demo (names are claimed, not proven) and
 * listens on localhost only unless HOST says otherwise. With it, every handshake needs a
 * token signed with that secret (as `bayou start --jwt-secret`), which the page gets from
 * the chat's `POST /chat/token`; HOST then defaults to 0.0.0.0.
 */
import { createChatServer } from './chat-server.js';

const port = process.env.PORT === undefined || process.env.PORT === '' ? 8080 : Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got "${process.env.PORT}"`);
  process.exit(2);
}
const jwtSecret = process.env.BAYOU_JWT_SECRET || undefined;
if (jwtSecret !== undefined && jwtSecret.length < 32) {
  console.error('BAYOU_JWT_SECRET must be at least 32 characters');
  process.exit(2);
}
const host = process.env.HOST || (jwtSecret === undefined ? '127.0.0.1' : '0.0.0.0');

const server = await createChatServer({ host, port, ...(jwtSecret !== undefined ? { jwtSecret } : {}) });

let closing = false;
function shutdown(): void {
  if (closing) return;
  closing = true;
  server.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const url = await server.listen();
const local = host === '127.0.0.1' || host === 'localhost' || host === '::1';
const posture =
  jwtSecret === undefined
    ? `open demo: no tokens, anyone who reaches it may chat under any name${local ? '; listening on localhost only' : ''} (set BAYOU_JWT_SECRET to require tokens)`
    : 'tokens required: handshakes carry a token signed with BAYOU_JWT_SECRET (issued by POST /chat/token)';
console.log(`Bayou chat demo: ${url} (${posture})`);
