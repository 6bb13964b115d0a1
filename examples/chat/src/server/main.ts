/**
 * `npm start` for the chat demo: serves it on PORT (default 8080) and HOST (default
 * 0.0.0.0), prints the URL, and shuts down gracefully on SIGINT/SIGTERM so clients
 * reconnect to wherever it comes back.
 */
import { createChatServer } from './chat-server.js';

const port = process.env.PORT === undefined || process.env.PORT === '' ? 8080 : Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got "${process.env.PORT}"`);
  process.exit(2);
}
const host = process.env.HOST || '0.0.0.0';

const server = await createChatServer({ host, port });

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
console.log(`Bayou chat demo: ${url}`);
