/**
 * A real HTTP receiver for webhook tests: records each POST's raw body and signature,
 * checks the signature with the shared secret, and can go down (its port closed) and come
 * back on the same port, as a receiver being redeployed would.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEvent {
  id: string;
  type: string;
  at: number;
  channel?: string;
  clientId?: string;
  user?: string;
  reason?: string;
}

export class WebhookReceiver {
  /** Every POST accepted, in arrival order. */
  readonly posts: {
    body: string;
    signature: string | undefined;
    valid: boolean;
    headers: Record<string, string | string[] | undefined>;
  }[] = [];
  private server: Server | null = null;
  port = 0;
  /** POSTs still to answer late (recorded, then answered after `stallMs`): an answer the sender gives up on. */
  stall = 0;
  stallMs = 0;

  constructor(private readonly secret: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Every event received, duplicates (redeliveries) included. */
  get events(): ReceivedEvent[] {
    return this.posts.flatMap((p) => (JSON.parse(p.body) as { events: ReceivedEvent[] }).events);
  }

  /** Events de-duplicated by `id`, as a receiver should. */
  unique(type?: string): ReceivedEvent[] {
    const seen = new Map<string, ReceivedEvent>();
    for (const e of this.events) if (!seen.has(e.id)) seen.set(e.id, e);
    return [...seen.values()].filter((e) => type === undefined || e.type === type);
  }

  verify(body: string, header: string | undefined): boolean {
    if (header === undefined || !header.startsWith('sha256=')) return false;
    const expected = createHmac('sha256', this.secret).update(body).digest();
    const given = Buffer.from(header.slice('sha256='.length), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const signature = req.headers['x-bayou-signature'] as string | undefined;
        const valid = this.verify(body, signature);
        this.posts.push({ body, signature, valid, headers: req.headers });
        const answer = () => res.writeHead(valid ? 204 : 401).end();
        if (this.stall > 0) {
          this.stall--;
          setTimeout(answer, this.stallMs);
        } else answer();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Goes down: the port refuses connections until `start` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
