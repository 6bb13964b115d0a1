/**
 * A loopback TCP proxy to a Redis server that can make the subscriber connections passing
 * through it silent: it stops forwarding Redis → node on them while their TCP connections
 * stay up (as after a failover behind a half-dead proxy or NAT entry). For the delivery
 * probe tests.
 */
import { createConnection, createServer as createTcpServer, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  upstream: Socket;
  /** Whether the node subscribed on it (its subscriber connection). */
  subscriber: boolean;
  silent: boolean;
}

/** A TCP proxy to Redis that can stop forwarding Redis → node on the subscriber connections it has now. */
export class SilencingProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly links: Link[],
  ) {}

  static async start(redisPort: number): Promise<SilencingProxy> {
    const links: Link[] = [];
    const server = createTcpServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: redisPort });
      const link = { client, upstream, subscriber: false, silent: false };
      links.push(link);
      client.on('data', (d) => {
        if (/subscribe/i.test(d.toString('latin1'))) link.subscriber = true;
        upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!link.silent) client.write(d);
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new SilencingProxy(server, (server.address() as { port: number }).port, links);
  }

  /** Stops forwarding Redis → node on every subscriber connection open now; they stay up. */
  silence(): number {
    const subs = this.links.filter((l) => l.subscriber && !l.client.destroyed);
    for (const l of subs) l.silent = true;
    return subs.length;
  }

  close(): Promise<void> {
    for (const l of this.links) l.client.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
