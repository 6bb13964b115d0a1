/**
 * The official CometD JavaScript client (Node, over `ws`) against a server with
 * `compression` on: it negotiates `permessage-deflate` and receives the same messages,
 * in order, with far fewer bytes on the wire; what it publishes (compressed by its
 * socket) arrives whole.
 */
import type { Message } from 'cometd';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cometdOver, handshake, publish, REPLY_MS, subscribe } from './cometd-helpers.js';
import {
  COMPRESSIBLE_FEED,
  countWritten,
  eventually,
  Inbox,
  type Running,
  startBayou,
  within,
} from './interop-helpers.js';

describe('the CometD client over WebSocket with compression on', () => {
  let bayou: Running;
  let written: () => number;
  let cometd: ReturnType<typeof cometdOver>;

  beforeEach(async () => {
    bayou = await startBayou(0, { compression: true });
    written = countWritten(bayou.server).written;
    cometd = cometdOver('websocket', bayou.url);
  });

  afterEach(async () => {
    if (!cometd.isDisconnected())
      await within(new Promise((resolve) => cometd.disconnect(resolve)), REPLY_MS, 'disconnect').catch(
        () => undefined,
      );
    await bayou.server.close();
  });

  it('receives the server publications in order, compressed on the wire', async () => {
    await handshake(cometd);
    await eventually(() => expect(cometd.getStatus()).toBe('connected'));
    const inbox = new Inbox<Message>();
    await subscribe(cometd, '/feed', inbox.push);
    const before = written();
    for (const data of COMPRESSIBLE_FEED) bayou.server.bayou.publish('/feed', data);
    const got = await inbox.waitFor(COMPRESSIBLE_FEED.length);
    expect(got.map((m) => m.data)).toEqual(COMPRESSIBLE_FEED);
    const json = COMPRESSIBLE_FEED.reduce((sum, d) => sum + JSON.stringify(d).length, 0);
    expect(written() - before).toBeLessThan(json / 3);
  });

  it('publishes a large message (compressed by its socket) that another CometD client receives whole', async () => {
    await handshake(cometd);
    const other = cometdOver('websocket', bayou.url);
    try {
      await handshake(other);
      const inbox = new Inbox<Message>();
      await subscribe(other, '/chat/room', inbox.push);
      const data = COMPRESSIBLE_FEED[0] as Record<string, unknown>;
      expect((await publish(cometd, '/chat/room', data)).successful).toBe(true);
      expect((await inbox.waitFor(1))[0]?.data).toEqual(data);
    } finally {
      await within(new Promise((resolve) => other.disconnect(resolve)), REPLY_MS, 'disconnect').catch(
        () => undefined,
      );
    }
  });
});
