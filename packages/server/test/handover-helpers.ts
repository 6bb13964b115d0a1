/**
 * Subscribers for the tests of sessions handed over at a drain (issue #35): CometD with its
 * ack extension, Faye and `@bayou/client`, each counting the numbered messages (`{ n }`)
 * that reach it on the channels it follows — counted once per message as it arrives, before
 * the client dispatches it to its subscriptions (a message matching `/a/*` and `/a/**` is
 * one message) — and its successful handshakes.
 */
import {
  BayouClient,
  longPolling,
  type Message,
  streaming,
  type WebSocketConstructor,
  websocket,
} from '@bayou/client';
import { AckExtension, type CometD } from 'cometd';
import Faye from 'faye';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { CreateServerOptions } from '../src/index.js';
import { disconnectAll } from './cluster-helpers.js';
import { cometdOver, disconnect, handshake, subscribe } from './cometd-helpers.js';
import { type Transport, within } from './interop-helpers.js';

interface FayeMessage {
  channel: string;
  successful?: boolean;
  data?: unknown;
}
interface FayeClient {
  subscribe(channel: string, onData: (data: unknown) => void): PromiseLike<unknown>;
  disconnect(): PromiseLike<unknown> | undefined;
  disable(feature: string): void;
  addExtension(extension: {
    incoming?: (message: FayeMessage, callback: (message: FayeMessage) => void) => void;
  }): void;
}
const FayeClient = (Faye as unknown as { Client: new (url: string, options: object) => FayeClient }).Client;

/** One subscriber: what it received, and how many handshakes it made. */
export interface Subscriber {
  readonly name: string;
  readonly received: number[];
  handshakes: number;
  /** Its meta replies (Faye over WebSocket), for a failure's message. */
  readonly log: string[];
}

/** The clients a test made, to close after it. */
export class HandoverClients {
  private readonly cometds: CometD[] = [];
  private readonly fayes: FayeClient[] = [];
  private readonly bayous: BayouClient[] = [];

  /** CometD with its ack extension on `transport`, subscribed to `channels`. */
  async cometd(url: string, transport: Transport, channels: readonly string[]): Promise<Subscriber> {
    const s = subscriber(`cometd+ack ${transport}`);
    const c = cometdOver(transport, url);
    this.cometds.push(c);
    c.registerExtension('ack', new AckExtension());
    c.registerExtension('count', {
      incoming(m: { channel: string; successful?: boolean; data?: unknown }) {
        if (m.channel === '/meta/handshake' && m.successful === true) s.handshakes++;
        count(s, channels, m.channel, m.data);
        return m;
      },
    });
    expect((await handshake(c)).successful).toBe(true);
    for (const channel of channels)
      expect((await subscribe(c, channel, () => {})).reply.successful).toBe(true);
    return s;
  }

  /** Faye on `transport` (over WebSocket: its handshake over HTTP first), subscribed to `channels`. */
  async faye(url: string, transport: Transport, channels: readonly string[]): Promise<Subscriber> {
    const s = subscriber(`faye ${transport}`);
    const client = new FayeClient(url, { timeout: 2, retry: 0.1 });
    this.fayes.push(client);
    if (transport === 'long-polling') client.disable('websocket');
    client.addExtension({
      incoming(message, callback) {
        if (message.channel === '/meta/handshake' && message.successful === true) s.handshakes++;
        if (message.channel.startsWith('/meta/') && transport === 'websocket')
          s.log.push(`${Date.now() % 100000} ${JSON.stringify(message).slice(0, 200)}`);
        count(s, channels, message.channel, message.data);
        callback(message);
      },
    });
    for (const channel of channels)
      await within(Promise.resolve(client.subscribe(channel, () => {})), 5000, 'faye subscribe');
    return s;
  }

  /** `@bayou/client` on `transport` only, subscribed to `channels`. */
  async bayou(
    url: string,
    transport: Transport | 'streaming',
    channels: readonly string[],
  ): Promise<Subscriber> {
    const s = subscriber(`@bayou/client ${transport}`);
    const client = new BayouClient(url, {
      transports: [{ websocket, 'long-polling': longPolling, streaming }[transport]],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      minReconnectDelay: 50,
      maxReconnectDelay: 500,
    });
    this.bayous.push(client);
    client.use({
      incoming(message: Message) {
        if (message.channel === '/meta/handshake' && message.successful === true) s.handshakes++;
        count(s, channels, message.channel, message.data);
        return message;
      },
    });
    const subs = channels.map((channel) => client.subscribe(channel, () => {}));
    await client.connect();
    for (const sub of subs) await sub.ready;
    return s;
  }

  async close(): Promise<void> {
    for (const c of this.cometds.splice(0)) await disconnect(c);
    for (const f of this.fayes.splice(0))
      await within(Promise.resolve(f.disconnect()), 1000, 'faye').catch(() => {});
    await disconnectAll(this.bayous);
  }
}

const subscriber = (name: string): Subscriber => ({ name, received: [], handshakes: 0, log: [] });

/** Counts a numbered message on a channel one of `channels` matches (`/a/*`: one segment, `/a/**`: any). */
function count(s: Subscriber, channels: readonly string[], channel: string, data: unknown): void {
  if (channel.startsWith('/meta/') || !channels.some((name) => matches(name, channel))) return;
  const n = (data as { n?: unknown } | undefined)?.n;
  if (typeof n === 'number') s.received.push(n);
}

function matches(name: string, channel: string): boolean {
  if (name.endsWith('/**')) return channel.startsWith(name.slice(0, -2));
  if (name.endsWith('/*')) {
    const prefix = name.slice(0, -1);
    return channel.startsWith(prefix) && !channel.slice(prefix.length).includes('/');
  }
  return name === channel;
}

/** What a failed expectation says about `s` after `n` messages were sent. */
export function describeOf(s: Subscriber, n: number): string {
  const got = new Set(s.received);
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !got.has(i));
  const dups = s.received.length - got.size;
  return `${s.log.slice(-25).join('\n')}\n${s.name}: ${s.received.length} received, ${dups} duplicates, ${s.handshakes} handshakes, missing ${missing.slice(0, 20).join(',')}`;
}

/**
 * A node of the handover tests: Redis under `keyPrefix`, a 300 ms paced drain, quick node
 * liveness (100 ms beats, 1 s TTL), 2 s held connects, 5 s maxInterval, history of 2,000.
 */
export function handoverNodeOptions(port: number, redisUrl: string, keyPrefix: string): CreateServerOptions {
  return {
    host: '127.0.0.1',
    port,
    logger: false,
    timeout: 2000,
    sweepInterval: 50,
    maxInterval: 5000,
    historySize: 2000,
    drainSpread: 300,
    redis: redisUrl,
    redisEngine: { keyPrefix, heartbeatMs: 100, nodeTtlMs: 1000, commandTimeoutMs: 2000 },
  };
}
