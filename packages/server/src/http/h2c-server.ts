/**
 * The standalone server's h2c listener (`http2: true` without TLS, behind a proxy that
 * terminates TLS): a `node:http` server, so HTTP/1.1 requests and WebSocket upgrades are
 * served as ever, whose connections that open with the HTTP/2 preface (`PRI * HTTP/2.0`,
 * RFC 9113 §3.4: no HTTP/1.1 method is `PRI`) are handed to an HTTP/2 server sharing its
 * request listener. Fastify's `serverFactory`.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import type { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const PREFACE = Buffer.from('PRI ');

export function h2cServer(handler: Handler): http.Server {
  const server = http.createServer(handler);
  const h2 = http2.createServer();
  // The HTTP/2 requests reach the same handler (Node's compatibility API).
  h2.on('request', (req, res) => {
    for (const listener of server.listeners('request') as Handler[]) listener(req as never, res as never);
  });
  const [http1] = server.listeners('connection') as ((socket: Socket) => void)[];
  if (http1 === undefined) throw new Error('node:http server without its connection listener');
  server.removeListener('connection', http1);
  server.on('connection', (socket: Socket) => {
    socket.once('readable', () => {
      const head = socket.read(Math.min(PREFACE.length, socket.readableLength)) as Buffer | null;
      if (head !== null) socket.unshift(head);
      if (head !== null && head.length === PREFACE.length && head.equals(PREFACE))
        h2.emit('connection', socket);
      else http1.call(server, socket);
    });
  });
  server.on('close', () => h2.close());
  return server;
}
