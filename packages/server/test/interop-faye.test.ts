/**
 * Interop with the Faye Node client (`faye`), over WebSocket and over long-polling.
 * Faye always handshakes over HTTP (its mandatory connection types exclude WebSocket)
 * and then upgrades its connection to the best type the server offers; long-polling
 * is forced with `client.disable('websocket')`. Which transport a session really uses
 * is checked on the server (`getSession(id).transport`, `/metrics`).
 */
import Faye from 'faye';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectionGauge,
  eventually,
  Inbox,
  type Running,
  startBayou,
  TRANSPORTS,
  type Transport,
  within,
} from './interop-helpers.js';

/** The part of Faye's (untyped) client API these tests use. */
interface FayeMessage {
  channel: string;
  clientId?: string;
  successful?: boolean;
  data?: unknown;
}
interface FayeSubscription extends PromiseLike<unknown> {
  withChannel(callback: (channel: string, data: unknown) => void): FayeSubscription;
  cancel(): void;
}
interface FayeClient {
  subscribe(channel: string, onData?: (data: unknown) => void): FayeSubscription;
  publish(channel: string, data: unknown): PromiseLike<unknown>;
  disconnect(): PromiseLike<unknown> | undefined;
  disable(feature: string): void;
  addExtension(extension: {
    incoming?: (message: FayeMessage, callback: (message: FayeMessage) => void) => void;
  }): void;
}
const FayeClient = (Faye as unknown as { Client: new (url: string, options: object) => FayeClient }).Client;

const REPLY_MS = 5000;

interface Connected {
  client: FayeClient;
  /** Every clientId the server handed this client, in order (a new one per handshake). */
  clientIds: string[];
}

describe.each(TRANSPORTS)('the Faye client over %s', (transport) => {
  let bayou: Running;
  const clients: FayeClient[] = [];

  /** A Faye client restricted to `transport`; its handshakes are recorded. */
  function fayeOver(): Connected {
    // `retry` (seconds) shortens the wait before retrying after a failure (default 5).
    const client = new FayeClient(bayou.url, { timeout: 10, retry: 0.1 });
    if (transport === 'long-polling') client.disable('websocket');
    const clientIds: string[] = [];
    client.addExtension({
      incoming(message, callback) {
        if (message.channel === '/meta/handshake' && message.successful && message.clientId)
          clientIds.push(message.clientId);
        callback(message);
      },
    });
    clients.push(client);
    return { client, clientIds };
  }

  beforeEach(async () => {
    bayou = await startBayou();
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) {
      await within(Promise.resolve(client.disconnect()), REPLY_MS, 'disconnect').catch(() => undefined);
    }
    await bayou.server.close();
  });

  it('handshakes and then really uses the intended transport', async () => {
    const { client, clientIds } = fayeOver();
    const inbox = new Inbox();
    await within(Promise.resolve(client.subscribe('/hello', inbox.push)), REPLY_MS, 'subscribe');
    expect(clientIds).toHaveLength(1);
    const id = clientIds[0] as string;
    await eventually(() => expect(bayou.server.bayou.session(id)?.transport).toBe(transport));
    const other: Transport = transport === 'websocket' ? 'long-polling' : 'websocket';
    await eventually(async () => {
      expect(await connectionGauge(bayou.base, transport)).toBe(1);
      expect(await connectionGauge(bayou.base, other)).toBe(0);
    });
    bayou.server.bayou.publish('/hello', { greeting: 'hi' });
    expect(await inbox.waitFor(1)).toEqual([{ greeting: 'hi' }]);
  });

  it('delivers what one client publishes to another client subscribed to the channel', async () => {
    const subscriber = fayeOver().client;
    const publisher = fayeOver().client;
    const inbox = new Inbox();
    await within(Promise.resolve(subscriber.subscribe('/chat/room', inbox.push)), REPLY_MS, 'subscribe');
    expect(bayou.server.bayou.subscriberCount('/chat/room')).toBe(1);

    const sent = [
      { text: 'first', n: 1 },
      { text: 'second', n: 2, nested: { list: [1, 2] } },
    ];
    for (const data of sent) {
      await within(Promise.resolve(publisher.publish('/chat/room', data)), REPLY_MS, 'publish');
    }
    expect(await inbox.waitFor(2)).toEqual(sent);
    expect(bayou.server.bayou.sessionCount).toBe(2);
  });

  it('gets one-segment messages on /* and any-depth messages on /**', async () => {
    const { client } = fayeOver();
    const star = new Inbox<[string, unknown]>();
    const starStar = new Inbox<[string, unknown]>();
    await within(
      Promise.resolve(client.subscribe('/wild/*').withChannel((c, d) => star.push([c, d]))),
      REPLY_MS,
      'subscribe /wild/*',
    );
    await within(
      Promise.resolve(client.subscribe('/wild/**').withChannel((c, d) => starStar.push([c, d]))),
      REPLY_MS,
      'subscribe /wild/**',
    );

    await within(Promise.resolve(client.publish('/wild/a', { depth: 1 })), REPLY_MS, 'publish');
    await within(Promise.resolve(client.publish('/wild/a/b', { depth: 2 })), REPLY_MS, 'publish');
    await within(Promise.resolve(client.publish('/other/a', { depth: 1 })), REPLY_MS, 'publish');

    await starStar.waitFor(2);
    // Deliveries keep their order, so /wild/* has seen everything it will see.
    expect(starStar.items).toEqual([
      ['/wild/a', { depth: 1 }],
      ['/wild/a/b', { depth: 2 }],
    ]);
    expect(star.items).toEqual([['/wild/a', { depth: 1 }]]);
  });

  it('stops receiving a channel after unsubscribing from it', async () => {
    const { client } = fayeOver();
    const news = new Inbox();
    const marker = new Inbox();
    const subscription = client.subscribe('/news', news.push);
    await within(Promise.resolve(subscription), REPLY_MS, 'subscribe /news');
    await within(Promise.resolve(client.subscribe('/marker', marker.push)), REPLY_MS, 'subscribe /marker');
    bayou.server.bayou.publish('/news', { n: 1 });
    await news.waitFor(1);

    subscription.cancel();
    await eventually(() => expect(bayou.server.bayou.subscriberCount('/news')).toBe(0));
    bayou.server.bayou.publish('/news', { n: 2 });
    bayou.server.bayou.publish('/marker', { done: true });
    await marker.waitFor(1);
    expect(news.items).toEqual([{ n: 1 }]);
  });

  it('gets the reply of a /service channel on its subscription, and no other client sees it', async () => {
    const { client } = fayeOver();
    const other = fayeOver().client;
    const answers = new Inbox();
    const overheard = new Inbox();
    const otherMarker = new Inbox();
    await within(Promise.resolve(client.subscribe('/service/echo', answers.push)), REPLY_MS, 'subscribe');
    await within(Promise.resolve(other.subscribe('/service/echo', overheard.push)), REPLY_MS, 'subscribe');
    await within(Promise.resolve(other.subscribe('/marker', otherMarker.push)), REPLY_MS, 'subscribe');

    const request = { question: 'ping?', list: [1, 2, 3] };
    await within(Promise.resolve(client.publish('/service/echo', request)), REPLY_MS, 'publish');
    const got = await answers.waitFor(1);
    expect(got[0]).toEqual(request);
    // A /service publish is never broadcast to other subscribers of the channel.
    bayou.server.bayou.publish('/marker', { done: true });
    await otherMarker.waitFor(1);
    expect(overheard.items).toEqual([]);
  });

  it('gets the reply of a /service channel exactly once', async () => {
    const { client } = fayeOver();
    const answers = new Inbox();
    const marker = new Inbox();
    await within(Promise.resolve(client.subscribe('/service/echo', answers.push)), REPLY_MS, 'subscribe');
    await within(Promise.resolve(client.subscribe('/marker', marker.push)), REPLY_MS, 'subscribe');
    const request = { question: 'once?' };
    await within(Promise.resolve(client.publish('/service/echo', request)), REPLY_MS, 'publish');
    await answers.waitFor(1);
    bayou.server.bayou.publish('/marker', { done: true });
    await marker.waitFor(1);
    expect(answers.items).toEqual([request]);
  });

  it('disconnects, and the server drops the session', async () => {
    const { client, clientIds } = fayeOver();
    await within(Promise.resolve(client.subscribe('/x', () => undefined)), REPLY_MS, 'subscribe');
    expect(bayou.server.bayou.sessionCount).toBe(1);
    await within(Promise.resolve(client.disconnect()), REPLY_MS, 'disconnect');
    await eventually(() => expect(bayou.server.bayou.sessionCount).toBe(0));
    expect(bayou.server.bayou.session(clientIds[0] as string)).toBeUndefined();
    expect(bayou.server.bayou.subscriberCount('/x')).toBe(0);
  });

  it('re-handshakes and resubscribes on its own after the server restarts on the same port', async () => {
    const { client, clientIds } = fayeOver();
    const inbox = new Inbox();
    await within(Promise.resolve(client.subscribe('/restart/feed', inbox.push)), REPLY_MS, 'subscribe');
    bayou.server.bayou.publish('/restart/feed', { before: true });
    await inbox.waitFor(1);

    const { port } = bayou;
    await bayou.server.close();
    bayou = await startBayou(port);

    await eventually(() => expect(bayou.server.bayou.subscriberCount('/restart/feed')).toBe(1), 15_000);
    expect(clientIds).toHaveLength(2);
    expect(clientIds[1]).not.toBe(clientIds[0]);
    await eventually(() =>
      expect(bayou.server.bayou.session(clientIds[1] as string)?.transport).toBe(transport),
    );

    bayou.server.bayou.publish('/restart/feed', { after: true });
    expect(await inbox.waitFor(2)).toEqual([{ before: true }, { after: true }]);
  });
});
