/**
 * The chaos cluster's load balancer, run in its own processes: plain round-robin with no
 * affinity — every HTTP request and every WebSocket upgrade goes to the next node in
 * turn. A node that refuses the connection (dead, or not yet restarted) is passed over
 * for a second and the request goes to the next one, as nginx's `proxy_next_upstream
 * error` does; a request is never sent twice once a node has accepted its connection
 * (a publish could be applied twice). A node whose `/readyz` does not answer 200 (asked
 * every `READY_POLL_MS` by `readiness.ts`: a draining node turns not ready first) gets no new request, as
 * a Kubernetes Service or a balancer's health check does; what it holds (WebSockets, a
 * relayed long-poll) stays where it is.
 *
 * Usage: `node round-robin.js <workers> <port>...`; with more than one worker the
 * listening socket is shared through `node:cluster` (the primary only accepts and hands
 * connections over, so a busy worker does not hold new connections in the kernel's
 * queue — one busy process accepted about 5 a second under a 2,000-client storm, and the
 * clients' WebSocket upgrades timed out). It reports `{ type: 'listening', port }` over IPC.
 */
import cluster from 'node:cluster';
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { watchReadiness } from './readiness.js';
import { Rotation } from './rotation.js';

const [workersArg, ...portArgs] = process.argv.slice(2);
const ports = portArgs.map(Number);
const workers = Math.max(1, Number(workersArg) || 1);

const refused = (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED';

function forward(
  rotation: Rotation,
  agent: Agent,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  tried: Set<number>,
): void {
  const port = rotation.pick(tried);
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
      rotation.refused(port);
      forward(rotation, agent, req, res, body, tried);
    } else if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
    else res.destroy();
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.end(body);
}

function upgrade(
  rotation: Rotation,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  tried: Set<number>,
): void {
  const port = rotation.pick(tried);
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
      rotation.refused(port);
      upgrade(rotation, req, socket, head, tried);
    } else socket.destroy();
  });
  socket.on('error', () => upstream.destroy());
}

function serve(report: (port: number) => void): void {
  const rotation = new Rotation(ports);
  const agent = new Agent({ keepAlive: true, maxSockets: 4096 });
  const server = createServer((req, res) => {
    // Bodies here are Bayeux batches and publishes: small, read whole so a refused node can be skipped.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(rotation, agent, req, res, Buffer.concat(chunks), new Set()));
    req.on('error', () => res.destroy());
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) =>
    upgrade(rotation, req, socket, head, new Set()),
  );
  server.keepAliveTimeout = 65_000;
  watchReadiness(rotation.ports, (port, ready) => rotation.ready(port, ready));
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    report((server.address() as { port: number }).port);
  });
}

if (ports.length > 0) {
  if (workers > 1 && cluster.isPrimary) {
    // The primary accepts and hands connections round-robin to the workers (cluster's default on Linux).
    let reported = false;
    for (let w = 0; w < workers; w++) {
      const worker = cluster.fork();
      worker.on('message', (m: { type?: string; port?: number }) => {
        if (m.type !== 'listening' || reported) return;
        reported = true;
        process.send?.(m);
      });
    }
    cluster.on('exit', () => process.exit(1));
  } else serve((port) => process.send?.({ type: 'listening', port }));
  process.on('disconnect', () => process.exit(0));
  // A worker's channel to a primary that was stopped first (the run's end): nothing to say.
  process.on('error', () => process.exit(0));
  cluster.worker?.on('error', () => process.exit(0));
}
