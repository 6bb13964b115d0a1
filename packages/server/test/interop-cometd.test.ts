/**
 * Interop with the official CometD JavaScript client (`cometd@9` run in Node by
 * `cometd-nodejs-client@2`), over WebSocket and over long-polling, each forced by
 * registering only that transport. The client comes from `cometd-helpers.ts`, whose `adapt()` installs a global `window`
 * (XMLHttpRequest, WebSocket), which is why this suite lives in its own file.
 */
import type { CometD, Message } from 'cometd';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cometdOver, handshake, publish, REPLY_MS, subscribe } from './cometd-helpers.js';
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

describe.each(TRANSPORTS)('the CometD client over %s', (transport) => {
  let bayou: Running;
  let cometd: CometD;

  beforeEach(async () => {
    bayou = await startBayou();
    cometd = cometdOver(transport, bayou.url);
  });

  afterEach(async () => {
    if (!cometd.isDisconnected()) {
      await within(new Promise((resolve) => cometd.disconnect(resolve)), REPLY_MS, 'disconnect').catch(
        () => undefined,
      );
    }
    await bayou.server.close();
  });

  it('handshakes and then really uses the forced transport', async () => {
    const reply = await handshake(cometd);
    expect(reply.successful).toBe(true);
    expect(reply.supportedConnectionTypes).toEqual(['websocket', 'streaming', 'eventsource', 'long-polling']);
    const clientId = cometd.getClientId() as string;
    expect(clientId).toBe(reply.clientId);
    expect(cometd.getTransport()?.type).toBe(transport);
    await eventually(() => expect(cometd.getStatus()).toBe('connected'));
    expect(bayou.server.bayou.session(clientId)?.transport).toBe(transport);
    const other: Transport = transport === 'websocket' ? 'long-polling' : 'websocket';
    await eventually(async () => {
      expect(await connectionGauge(bayou.base, transport)).toBe(1);
      expect(await connectionGauge(bayou.base, other)).toBe(0);
    });
  });

  it('receives what it publishes on a channel it subscribed to, and what the server publishes', async () => {
    await handshake(cometd);
    const inbox = new Inbox<Message>();
    const { reply } = await subscribe(cometd, '/chat/room', inbox.push);
    expect(reply.successful).toBe(true);
    expect(bayou.server.bayou.subscriberCount('/chat/room')).toBe(1);

    const sent = { text: 'hello from CometD', n: 1, nested: { ok: true } };
    const ack = await publish(cometd, '/chat/room', sent);
    expect(ack.successful).toBe(true);
    bayou.server.bayou.publish('/chat/room', { text: 'from the server', n: 2 });

    const got = await inbox.waitFor(2);
    expect(got.map((m) => m.channel)).toEqual(['/chat/room', '/chat/room']);
    expect(got.map((m) => m.data)).toEqual([sent, { text: 'from the server', n: 2 }]);
  });

  it('gets one-segment messages on /* and any-depth messages on /**', async () => {
    await handshake(cometd);
    const star = new Inbox<Message>();
    const starStar = new Inbox<Message>();
    expect((await subscribe(cometd, '/wild/*', star.push)).reply.successful).toBe(true);
    expect((await subscribe(cometd, '/wild/**', starStar.push)).reply.successful).toBe(true);

    expect((await publish(cometd, '/wild/a', { depth: 1 })).successful).toBe(true);
    expect((await publish(cometd, '/wild/a/b', { depth: 2 })).successful).toBe(true);
    expect((await publish(cometd, '/other/a', { depth: 1 })).successful).toBe(true);

    await starStar.waitFor(2);
    // Deliveries keep their order, so /wild/* has seen everything it will see.
    expect(starStar.items.map((m) => [m.channel, m.data])).toEqual([
      ['/wild/a', { depth: 1 }],
      ['/wild/a/b', { depth: 2 }],
    ]);
    expect(star.items.map((m) => [m.channel, m.data])).toEqual([['/wild/a', { depth: 1 }]]);
  });

  it('stops receiving a channel after unsubscribing from it', async () => {
    await handshake(cometd);
    const news = new Inbox<Message>();
    const marker = new Inbox<Message>();
    const { handle } = await subscribe(cometd, '/news', news.push);
    await subscribe(cometd, '/marker', marker.push);
    await publish(cometd, '/news', { n: 1 });
    await news.waitFor(1);

    const reply = await within(
      new Promise<Message>((resolve) => cometd.unsubscribe(handle, resolve)),
      REPLY_MS,
      'unsubscribe reply',
    );
    expect(reply.successful).toBe(true);
    expect(bayou.server.bayou.subscriberCount('/news')).toBe(0);

    await publish(cometd, '/news', { n: 2 });
    await publish(cometd, '/marker', { done: true });
    await marker.waitFor(1);
    expect(news.items.map((m) => m.data)).toEqual([{ n: 1 }]);
  });

  it('calls a /service channel with remoteCall and gets the reply data', async () => {
    await handshake(cometd);
    const request = { question: 'ping?', list: [1, 2, 3] };
    const reply = await within(
      new Promise<Message>((resolve) => cometd.remoteCall('/echo', request, REPLY_MS, resolve)),
      REPLY_MS + 1000,
      'remoteCall reply',
    );
    expect(reply.successful).toBe(true);
    expect(reply.channel).toBe('/service/echo');
    expect(reply.data).toEqual(request);
  });

  it('publishes to a /service channel: the publish is acknowledged and a listener gets the answer once', async () => {
    await handshake(cometd);
    const answers = new Inbox<Message>();
    cometd.addListener('/service/echo', answers.push);
    const marker = new Inbox<Message>();
    await subscribe(cometd, '/marker', marker.push);

    const request = { question: 'listener style' };
    const ack = await publish(cometd, '/service/echo', request);
    expect(ack.successful).toBe(true);
    await answers.waitFor(1);
    bayou.server.bayou.publish('/marker', { done: true });
    await marker.waitFor(1);
    expect(answers.items.map((m) => m.data)).toEqual([request]);
  });

  it('disconnects, and the server drops the session', async () => {
    await handshake(cometd);
    const clientId = cometd.getClientId() as string;
    await eventually(() => expect(bayou.server.bayou.sessionCount).toBe(1));

    const reply = await within(
      new Promise<Message>((resolve) => cometd.disconnect(resolve)),
      REPLY_MS,
      'disconnect reply',
    );
    expect(reply.successful).toBe(true);
    expect(cometd.isDisconnected()).toBe(true);
    await eventually(() => expect(bayou.server.bayou.sessionCount).toBe(0));
    expect(bayou.server.bayou.session(clientId)).toBeUndefined();
  });

  it('re-handshakes on its own after the server restarts on the same port, and receives again', async () => {
    // CometD clears subscriptions on every handshake (Client.js #handshake →
    // clearSubscriptions); its documented idiom is to subscribe in a /meta/handshake
    // listener, which runs again on the automatic re-handshake.
    const inbox = new Inbox<Message>();
    const handshakes = new Inbox<Message>();
    cometd.addListener('/meta/handshake', (m) => {
      handshakes.push(m);
      if (m.successful) cometd.subscribe('/restart/feed', inbox.push);
    });
    await handshake(cometd);
    const firstId = cometd.getClientId();
    await eventually(() => expect(bayou.server.bayou.subscriberCount('/restart/feed')).toBe(1));
    bayou.server.bayou.publish('/restart/feed', { before: true });
    await inbox.waitFor(1);

    const { port } = bayou;
    await bayou.server.close();
    bayou = await startBayou(port);

    await eventually(() => expect(bayou.server.bayou.subscriberCount('/restart/feed')).toBe(1), 15_000);
    const secondId = cometd.getClientId() as string;
    expect(secondId).not.toBe(firstId);
    expect(handshakes.items.filter((m) => m.successful)).toHaveLength(2);
    expect(handshakes.items.at(-1)?.reestablish).toBe(true);
    expect(bayou.server.bayou.session(secondId)?.transport).toBe(transport);
    expect(cometd.getTransport()?.type).toBe(transport);

    bayou.server.bayou.publish('/restart/feed', { after: true });
    const got = await inbox.waitFor(2);
    expect(got.map((m) => m.data)).toEqual([{ before: true }, { after: true }]);
  });
});
