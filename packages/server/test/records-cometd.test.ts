/**
 * A plain CometD client on a record subject sees ordinary Bayeux messages: the snapshot,
 * then deltas, with full field names and nothing Bayou-specific. In its own file because
 * `adapt()` installs globals.
 */
import { CometD, type Message } from 'cometd';
import { adapt } from 'cometd-nodejs-client';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/index.js';
import { eventually, TRANSPORTS } from './interop-helpers.js';

adapt();

describe.each(TRANSPORTS)('a CometD client on a record subject over %s', (transport) => {
  it('receives the full image, then deltas with full field names', async () => {
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      timeout: 2000,
      records: [{ pattern: '/fx/*' }],
    });
    const base = await server.listen();
    server.bayou.updateRecord('/fx/EURUSD', { bid: 1.1, ask: 1.2 });
    const cometd = new CometD();
    for (const type of cometd.getTransportTypes()) if (type !== transport) cometd.unregisterTransport(type);
    cometd.configure({ url: `${base}/bayeux`, logLevel: 'warn' });
    const received: Message[] = [];
    await new Promise((resolve) => cometd.handshake(resolve));
    await new Promise((resolve) => cometd.subscribe('/fx/EURUSD', (m) => received.push(m), resolve));
    await eventually(() => received.length === 1);
    server.bayou.updateRecord('/fx/EURUSD', { ask: 1.25 });
    await eventually(() => received.length === 2);
    expect(received.map((m) => ({ channel: m.channel, data: m.data, ext: m.ext }))).toEqual([
      { channel: '/fx/EURUSD', data: { bid: 1.1, ask: 1.2 }, ext: undefined },
      { channel: '/fx/EURUSD', data: { ask: 1.25 }, ext: undefined },
    ]);
    await new Promise((resolve) => cometd.disconnect(resolve));
    await server.close();
  });
});
