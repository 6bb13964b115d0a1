/**
 * The chaos cluster's load balancer, run in its own process: plain round-robin with no
 * affinity — every HTTP request and every WebSocket upgrade goes to the next node in
 * turn. A node that refuses the connection (dead, or not yet restarted) is passed over
 * for a second and the request goes to the next one, as nginx's `proxy_next_upstream
 * error` does; a request is never sent twice once a node has accepted its connection
 * (a publish could be applied twice). Usage: `node round-robin.js <port>...`; it reports
 * `{ type: 'listening', port }` over IPC.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

const ports = process.argv.slice(2).map(Number);
const agent = new Agent({ keepAlive: true, maxSockets: 4096 });
/** port → time until which it is passed over. */
const downUntil = new Map<number, number>();
let next = 0;

function pick(tried: ReadonlySet<number>): number | null {
  const now = Date.now();
  for (let i = 0; i < ports.length; i++) {
    const port = ports[next++ % ports.length] as number;
    if (!tried.has(port) && (downUntil.get(port) ?? 0) <= now) return port;
  }
  for (const port of ports) if (!tried.has(port)) return port; // all marked down: try anyway
  return null;
}

const refused = (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED';

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, tried: Set<number>): void {
  const port = pick(tried);
  if (port === null) {
    res.writeHead(502, { 'content-type': 'text/plain' }).end('no node reachable');
    return;
  }
  tried.add(port);
  const upstream = request(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    if (refused(err)) {
      downUntil.set(port, Date.now() + 1000);
      forward(req, res, body, tried);
    } else if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
    else res.destroy();
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.end(body);
}

function upgrade(req: IncomingMessage, socket: Socket, head: Buffer, tried: Set<number>): void {
  const port = pick(tried);
  if (port === null) {
    socket.destroy();
    return;
  }
  tried.add(port);
  const upstream = connect(port, '127.0.0.1', () => {
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
    upstream.once('close', () => socket.destroy());
    socket.once('close', () => upstream.destroy());
  });
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    if (refused(err) && !socket.destroyed) {
      downUntil.set(port, Date.now() + 1000);
      upgrade(req, socket, head, tried);
    } else socket.destroy();
  });
  socket.on('error', () => upstream.destroy());
}

const server = createServer((req, res) => {
  // Bodies here are Bayeux batches and publishes: small, read whole so a refused node can be skipped.
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => forward(req, res, Buffer.concat(chunks), new Set()));
  req.on('error', () => res.destroy());
});
server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) =>
  upgrade(req, socket, head, new Set()),
);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as { port: number }).port });
});
process.on('disconnect', () => process.exit(0));
