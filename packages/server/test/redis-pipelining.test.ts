/**
 * Pipelined publishes: a session's publishes in one frame go to Redis without waiting for
 * each acknowledgement, so their fan-out comes back together (several messages per
 * subscriber frame), while replies and deliveries keep the order they have on the memory
 * engine, and messages that must wait (an async canPublish, a service call, a meta
 * message) still wait.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BayouServer, CreateServerOptions } from '../src/index.js';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';
import { startServer } from './start-server.js';
import { type Msg, TestClient } from './test-client.js';

requireRedis('pipelined publishes');

describe.runIf(redisAvailable)('pipelined publishes per session', () => {
  const redis = redisPerFile();
  let server: BayouServer | null = null;
  const clients: TestClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await server?.close();
    server = null;
  });

  async function start(engine: 'memory' | 'redis', options: CreateServerOptions = {}) {
    const started = await startServer({
      ...(engine === 'redis'
        ? { redis: redis().url, redisEngine: { keyPrefix: `pipe${process.pid}:` } }
        : {}),
      ...options,
    });
    server = started.server;
    const publisher = new TestClient(started.base, 'websocket');
    const subscriber = new TestClient(started.base, 'websocket');
    clients.push(publisher, subscriber);
    await publisher.connect();
    await subscriber.connect();
    await subscriber.subscribe(['/feed/a', '/feed/b', '/feed/slow']);
    await publisher.subscribe('/feed/a');
    // The first publish on a fresh Redis loads the script in a later turn: warm it up.
    await subscriber.drained((channel, data) => started.server.bayou.publish(channel, data));
    return { server: started.server, publisher, subscriber };
  }

  const publish = (channel: string, i: number): Msg => ({ channel, data: { i } });

  /** Sends `messages` (with the publisher's clientId) in one frame; the replies in arrival order. */
  async function burst(publisher: TestClient, messages: Msg[]): Promise<Msg[]> {
    const from = publisher.received.length;
    const replies = await publisher.send(messages.map((m) => ({ clientId: publisher.clientId, ...m })));
    const ids = new Set(replies.map((r) => r.id));
    const arrived = publisher.received.slice(from).filter((m) => ids.has(m.id as string));
    return arrived;
  }

  describe.each(['memory', 'redis'] as const)('on the %s engine', (engine) => {
    it('answers a burst in order and delivers it in order, each message once', async () => {
      const { publisher, subscriber } = await start(engine, {
        canPublish: (_session, channel) => channel !== '/feed/denied',
      });
      const messages = [...Array(10).keys()].map((i) => publish(i % 2 === 0 ? '/feed/a' : '/feed/b', i));
      // A refusal in the middle keeps its place.
      messages.splice(5, 0, publish('/feed/denied', 99));
      const replies = await burst(publisher, messages);
      expect(replies.map((r) => r.successful)).toEqual(messages.map((m) => m.channel !== '/feed/denied'));
      expect(replies.map((r) => Number(r.id))).toEqual(
        [...replies.map((r) => Number(r.id))].sort((x, y) => x - y),
      );
      await subscriber.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 9);
      const got = subscriber.deliveries('/feed/').map((m) => (m.data as { i: number }).i);
      expect(got).toEqual([...Array(10).keys()]);
      // The publisher's own copies follow its replies.
      await publisher.waitFor((m) => m.successful === undefined && (m.data as { i?: number })?.i === 8);
      const own = publisher.received.filter((m) => m.channel === '/feed/a');
      const firstCopy = own.findIndex((m) => m.successful === undefined);
      const firstReply = own.findIndex((m) => m.successful === true);
      expect(firstReply).toBeGreaterThanOrEqual(0);
      expect(firstCopy).toBeGreaterThan(firstReply);
      expect(own.filter((m) => m.successful === undefined).map((m) => (m.data as { i: number }).i)).toEqual([
        0, 2, 4, 6, 8,
      ]);
    });

    it('keeps an async canPublish, a service call and a meta message waiting their turn', async () => {
      const {
        server: s,
        publisher,
        subscriber,
      } = await start(engine, {
        canPublish: (_session, channel, message) =>
          channel === '/feed/slow'
            ? new Promise<boolean>((resolve) =>
                setTimeout(() => resolve((message.data as { i: number }).i !== 4), 20),
              )
            : true,
      });
      const seen: number[] = [];
      s.bayou.service('/service/seen', () => {
        seen.push(subscriber.deliveries('/feed/').length);
        return null;
      });
      const messages: Msg[] = [
        publish('/feed/a', 0),
        publish('/feed/slow', 1),
        publish('/feed/a', 2),
        { channel: '/service/seen', data: null },
        publish('/feed/slow', 4), // refused by the hook, later
        publish('/feed/b', 5),
        { channel: '/meta/subscribe', subscription: '/feed/c' },
        publish('/feed/c', 7),
      ];
      const replies = await burst(publisher, messages);
      // The service call answers twice (its reply, then its result).
      expect(replies.map((r) => r.channel)).toEqual([
        '/feed/a',
        '/feed/slow',
        '/feed/a',
        '/service/seen',
        '/service/seen',
        '/feed/slow',
        '/feed/b',
        '/meta/subscribe',
        '/feed/c',
      ]);
      expect(replies.map((r) => r.successful)).toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
        true,
        true,
        true,
      ]);
      // The subscribe came after the publishes before it: the publisher gets its own /feed/c copy.
      await publisher.waitFor((m) => m.channel === '/feed/c' && m.successful === undefined);
      await subscriber.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 5);
      expect(subscriber.deliveries('/feed/').map((m) => (m.data as { i: number }).i)).toEqual([0, 1, 2, 5]);
      expect(seen).toHaveLength(1);
    });
  });

  it('goes on with the next frames of a session while the first awaits Redis, in order', async () => {
    const { publisher, subscriber } = await start('redis');
    const from = subscriber.frames.length;
    const sent: string[] = [];
    // Five frames written back to back, a subscribe in the middle of the fourth.
    for (let f = 0; f < 5; f++) {
      const frame: Msg[] = [...Array(10).keys()].map((k) => ({
        id: `f${f}-${k}`,
        clientId: publisher.clientId,
        ...publish('/feed/b', f * 10 + k),
      }));
      if (f === 3)
        frame.splice(5, 0, {
          id: 'f3-sub',
          clientId: publisher.clientId,
          channel: '/meta/subscribe',
          subscription: '/feed/b',
        });
      sent.push(...frame.map((m) => m.id as string));
      await publisher.sendRaw(JSON.stringify(frame));
    }
    await publisher.waitFor((m) => m.id === 'f4-9');
    const replies = publisher.received.filter((m) => typeof m.id === 'string' && m.id.startsWith('f'));
    expect(replies.map((m) => m.id)).toEqual(sent);
    expect(replies.every((m) => m.successful === true)).toBe(true);
    await subscriber.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 49);
    const frames = subscriber.frames.slice(from).map((f) => f.filter((m) => m.channel === '/feed/b'));
    const carrying = frames.filter((f) => f.length > 0);
    expect(carrying.flat().map((m) => (m.data as { i: number }).i)).toEqual([...Array(50).keys()]);
    // Frame after frame, each waiting for Redis, gave at most 10 per subscriber frame.
    expect(50 / carrying.length).toBeGreaterThan(10);
    // Subscribed once the publishes before it were acknowledged: it gets every one after it,
    // in order. (Copies of earlier ones may reach it too: Redis acknowledges a publish on one
    // connection and delivers it on another, and the node may read the acknowledgement first.)
    await publisher.waitFor((m) => m.successful === undefined && (m.data as { i?: number })?.i === 49);
    const own = publisher.deliveries('/feed/b').map((m) => (m.data as { i: number }).i);
    expect(own.filter((i) => i >= 35)).toEqual([...Array(15).keys()].map((k) => 35 + k));
  });

  it('keeps frames queued behind an async canPublish in order, then pipelines them', async () => {
    const { publisher, subscriber } = await start('redis', {
      canPublish: (_session, channel) =>
        channel === '/feed/slow'
          ? new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 30))
          : true,
    });
    const sent: string[] = [];
    const frames: Msg[][] = [[{ id: 's', clientId: publisher.clientId, ...publish('/feed/slow', -1) }]];
    for (let f = 0; f < 6; f++)
      frames.push(
        [...Array(10).keys()].map((k) => ({
          id: `q${f}-${k}`,
          clientId: publisher.clientId,
          ...publish('/feed/b', f * 10 + k),
        })),
      );
    for (const frame of frames) {
      sent.push(...frame.map((m) => m.id as string));
      await publisher.sendRaw(JSON.stringify(frame));
    }
    await publisher.waitFor((m) => m.id === 'q5-9');
    const ids = new Set(sent);
    expect(publisher.received.filter((m) => ids.has(m.id as string)).map((m) => m.id)).toEqual(sent);
    await subscriber.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 59);
    expect(subscriber.deliveries('/feed/').map((m) => (m.data as { i: number }).i)).toEqual([
      -1,
      ...Array(60).keys(),
    ]);
  });

  it('delivers a burst sent to Redis in one go in fewer frames than messages', async () => {
    const { publisher, subscriber } = await start('redis');
    const from = subscriber.frames.length;
    for (let round = 0; round < 5; round++) {
      const messages = [...Array(10).keys()].map((i) => publish('/feed/b', round * 10 + i));
      await burst(publisher, messages);
    }
    await subscriber.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 49);
    const frames = subscriber.frames.slice(from).map((f) => f.filter((m) => m.channel === '/feed/b'));
    const carrying = frames.filter((f) => f.length > 0);
    expect(carrying.flat().map((m) => (m.data as { i: number }).i)).toEqual([...Array(50).keys()]);
    // One Redis round trip per publish gave one message per frame; a burst comes back whole.
    expect(50 / carrying.length).toBeGreaterThan(3);
  });
});
