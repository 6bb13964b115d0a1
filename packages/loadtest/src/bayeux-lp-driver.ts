/**
 * Bayeux long-polling for many simulated clients over node:http keep-alive agents (one
 * agent per local address). Each client keeps one /meta/connect in flight and re-sends it
 * as soon as the held response comes back; publishes and subscribes go as separate POSTs.
 */
import http from 'node:http';
import type { Message } from '@bayou/protocol';
import { type Driver, type DriverOptions, deliverPayload, toHttpUrl } from './driver.js';

interface LpClient {
  clientId: string;
  agent: http.Agent;
  open: boolean;
}

type Reply = (error: Error | undefined, messages: Message[]) => void;

export class BayeuxLpDriver implements Driver {
  private readonly options: DriverOptions;
  private readonly url: URL;
  private readonly agents: http.Agent[];
  private readonly clients: (LpClient | undefined)[] = [];
  private closing = false;

  constructor(options: DriverOptions) {
    this.options = options;
    this.url = new URL(toHttpUrl(options.url));
    const addrs = options.localAddresses.length > 0 ? options.localAddresses : [undefined];
    this.agents = addrs.map(
      (localAddress) => new http.Agent({ keepAlive: true, maxSockets: Infinity, localAddress }),
    );
  }

  /** POSTs a JSON array and hands back the parsed reply array. */
  private post(agent: http.Agent, body: string, reply: Reply): void {
    const req = http.request(this.url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', (error) => reply(error, []));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reply(new Error(`HTTP ${res.statusCode}`), []);
        try {
          reply(undefined, JSON.parse(Buffer.concat(chunks).toString()) as Message[]);
        } catch (error) {
          reply(error as Error, []);
        }
      });
    });
    req.end(body);
  }

  private request(agent: http.Agent, body: string): Promise<Message[]> {
    return new Promise((resolve, reject) => {
      this.post(agent, body, (error, messages) => (error ? reject(error) : resolve(messages)));
    });
  }

  async open(index: number): Promise<void> {
    const agent = this.agents[index % this.agents.length]!;
    const [reply] = await this.request(
      agent,
      `[{"channel":"/meta/handshake","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["long-polling"],"id":"1"}]`,
    );
    if (!reply?.successful || typeof reply.clientId !== 'string') {
      throw new Error(`handshake failed: ${reply?.error ?? 'no reply'}`);
    }
    const c: LpClient = { clientId: reply.clientId, agent, open: true };
    this.clients[index] = c;
    this.connect(index, c);
  }

  private connect(index: number, c: LpClient): void {
    const body = `[{"channel":"/meta/connect","clientId":"${c.clientId}","connectionType":"long-polling"}]`;
    this.post(c.agent, body, (error, messages) => {
      if (this.closing || !c.open) return;
      let ok = error === undefined;
      for (const m of messages) {
        if (m.channel === '/meta/connect') ok = ok && m.successful === true;
        else if (m.data !== undefined && !m.channel.startsWith('/meta/'))
          deliverPayload(this.options.sink, m.data);
      }
      if (ok) return this.connect(index, c);
      c.open = false;
      this.options.onSessionLost?.(index);
    });
  }

  async subscribe(index: number, channels: readonly string[]): Promise<void> {
    const c = this.clients[index];
    if (!c) throw new Error(`client ${index} is not open`);
    const body = channels.map(
      (ch) => `{"channel":"/meta/subscribe","clientId":"${c.clientId}","subscription":"${ch}"}`,
    );
    const replies = await this.request(c.agent, `[${body.join(',')}]`);
    const failed = replies.find((m) => m.channel === '/meta/subscribe' && !m.successful);
    if (failed) throw new Error(`subscribe ${String(failed.subscription)} failed: ${failed.error ?? ''}`);
  }

  publish(index: number, channel: string, dataJson: string): void {
    const c = this.clients[index];
    if (!c?.open) return;
    const body = `[{"channel":"${channel}","clientId":"${c.clientId}","data":${dataJson}}]`;
    this.post(c.agent, body, (_error, messages) => {
      // Some servers answer a publish with deliveries queued for the publisher.
      for (const m of messages) {
        if (m.data !== undefined && !m.channel.startsWith('/meta/'))
          deliverPayload(this.options.sink, m.data);
      }
    });
  }

  connected(): number {
    let n = 0;
    for (const c of this.clients) if (c?.open) n++;
    return n;
  }

  async close(): Promise<void> {
    this.closing = true;
    const bodies = this.clients.flatMap((c) =>
      c?.open ? [[c, `[{"channel":"/meta/disconnect","clientId":"${c.clientId}"}]`] as const] : [],
    );
    // Disconnect politely in slices so a server is not hit by thousands of requests at once.
    for (let i = 0; i < bodies.length; i += 200) {
      await Promise.all(
        bodies.slice(i, i + 200).map(([c, body]) => this.request(c.agent, body).catch(() => undefined)),
      );
    }
    for (const c of this.clients) if (c) c.open = false;
    for (const agent of this.agents) agent.destroy();
  }
}

export function bayeuxLongPolling(options: DriverOptions): Driver {
  return new BayeuxLpDriver(options);
}
