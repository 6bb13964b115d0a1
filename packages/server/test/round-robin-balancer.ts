/**
 * A load balancer for cluster tests: plain round-robin with no affinity. Every HTTP
 * request goes to the next node in turn, whatever connection or session it came on, and
 * so does every WebSocket upgrade. It counts the requests each node got and remembers
 * the order, so a test can show that consecutive requests really landed on different
 * nodes. A node can be taken out (as a balancer's health check would after it died).
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface Upstream {
  /** A label for counts, e.g. `node0`. */
  name: string;
  port: number;
}

export class RoundRobinBalancer {
  /** Requests (HTTP and upgrades) each node received, by name. */
  readonly counts = new Map<string, number>();
  /** The node of every HTTP request and upgrade, in arrival order. */
  readonly order: string[] = [];
  private next = 0;
  private readonly out = new Set<string>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(private readonly upstreams: readonly Upstream[]) {
    for (const u of upstreams) this.counts.set(u.name, 0);
    this.server = createServer((req, res) => {
      const target = this.pick();
      const proxied = request(
        {
          host: '127.0.0.1',
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: this.agent,
        },
        (upstream: IncomingMessage) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
          // A response cut by the node (it died, its connections were closed) is cut for the
          // client too, as nginx does: a held stream must not look open when it is not.
          upstream.once('close', () => {
            if (!upstream.complete) res.destroy();
          });
        },
      );
      proxied.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad gateway');
      });
      res.on('close', () => {
        // The client went away (or the test ended): drop the upstream exchange too.
        if (!res.writableFinished) proxied.destroy();
      });
      req.pipe(proxied);
    });
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const target = this.pick();
      const upstream = connect(target.port, '127.0.0.1', () => {
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      this.sockets.add(upstream);
      upstream.once('close', () => {
        this.sockets.delete(upstream);
        socket.destroy();
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      socket.once('close', () => upstream.destroy());
    });
  }

  static async start(upstreams: readonly Upstream[]): Promise<RoundRobinBalancer> {
    const balancer = new RoundRobinBalancer(upstreams);
    await new Promise<void>((resolve) => balancer.server.listen(0, '127.0.0.1', resolve));
    return balancer;
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('balancer not listening');
    return address.port;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Stops sending anything to `name` (its health check failed). */
  remove(name: string): void {
    this.out.add(name);
  }

  /** Sends to `name` again (it passes its health check again, e.g. after a restart). */
  restore(name: string): void {
    this.out.delete(name);
  }

  /** Whether no two consecutive entries of `order` (from `from` on) name the same node. */
  alternates(from = 0): boolean {
    for (let i = from + 1; i < this.order.length; i++) if (this.order[i] === this.order[i - 1]) return false;
    return true;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pick(): Upstream {
    for (;;) {
      const u = this.upstreams[this.next++ % this.upstreams.length] as Upstream;
      if (this.out.has(u.name) && this.out.size < this.upstreams.length) continue;
      this.counts.set(u.name, (this.counts.get(u.name) ?? 0) + 1);
      this.order.push(u.name);
      return u;
    }
  }
}
