/**
 * The Faye Node client with its `permessage-deflate` extension against a server with
 * `compression` on: once it has moved to WebSocket it receives the same messages, in
 * order, with far fewer bytes on the wire.
 */
import Faye from 'faye';
import deflate from 'permessage-deflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COMPRESSIBLE_FEED,
  countWritten,
  eventually,
  Inbox,
  type Running,
  startBayou,
  within,
} from './interop-helpers.js';

interface FayeClient {
  subscribe(channel: string, onData?: (data: unknown) => void): PromiseLike<unknown>;
  disconnect(): PromiseLike<unknown> | undefined;
  addWebsocketExtension(extension: unknown): void;
  addExtension(extension: {
    incoming: (message: { clientId?: string }, callback: (message: unknown) => void) => void;
  }): void;
}
const FayeClient = (Faye as unknown as { Client: new (url: string, options: object) => FayeClient }).Client;
const REPLY_MS = 5000;

describe('the Faye client over WebSocket with compression on', () => {
  let bayou: Running;
  let written: () => number;
  let client: FayeClient;
  let clientId = '';

  beforeEach(async () => {
    bayou = await startBayou(0, { compression: true });
    written = countWritten(bayou.server).written;
    client = new FayeClient(bayou.url, { timeout: 10, retry: 0.1 });
    client.addWebsocketExtension(deflate);
    client.addExtension({
      incoming(message, callback) {
        if (message.clientId !== undefined) clientId = message.clientId;
        callback(message);
      },
    });
  });

  afterEach(async () => {
    await within(Promise.resolve(client.disconnect()), REPLY_MS, 'disconnect').catch(() => undefined);
    await bayou.server.close();
  });

  it('receives the server publications in order, compressed on the wire', async () => {
    const inbox = new Inbox();
    await within(Promise.resolve(client.subscribe('/feed', inbox.push)), REPLY_MS, 'subscribe');
    await eventually(() => expect(bayou.server.bayou.session(clientId)?.transport).toBe('websocket'));
    const before = written();
    for (const data of COMPRESSIBLE_FEED) bayou.server.bayou.publish('/feed', data);
    expect(await inbox.waitFor(COMPRESSIBLE_FEED.length)).toEqual(COMPRESSIBLE_FEED);
    const json = COMPRESSIBLE_FEED.reduce((sum, d) => sum + JSON.stringify(d).length, 0);
    expect(written() - before).toBeLessThan(json / 3);
  });
});
