// @ts-check
// A round-robin HTTP balancer with no affinity for the cluster bench, run in its own
// process: every request (and WebSocket upgrade) goes to the next node. Usage:
// `node round-robin.mjs <port> <port>...`; reports its URL over IPC like the servers.
import { Agent, createServer, request } from 'node:http';
import { connect } from 'node:net';
import { announce, urlOf } from './servers/common.mjs';

const ports = process.argv.slice(2).map(Number);
const agent = new Agent({ keepAlive: true, maxSockets: 2048 });
let next = 0;
const pick = () => /** @type {number} */ (ports[next++ % ports.length]);

const server = createServer((req, res) => {
  const upstream = request(
    { host: '127.0.0.1', port: pick(), method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.on('upgrade', (req, socket, head) => {
  const upstream = connect(pick(), '127.0.0.1', () => {
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(urlOf(server)));
