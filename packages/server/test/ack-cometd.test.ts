/**
 * The official CometD client with its AckExtension negotiates acknowledgements with Bayou
 * and receives every message once, in order, over both transports. Own file: `adapt()`
 * installs globals.
 */
import { AckExtension, CometD, type Message } from 'cometd';

import { adapt } from 'cometd-nodejs-client';
import { describe, expect, it } from 'vitest';
import { createServer } from '../src/index.js';
import { eventually, TRANSPORTS } from './interop-helpers.js';

adapt();

describe.each(TRANSPORTS)('the CometD AckExtension over %s', (transport) => {
  it('negotiates acknowledgements and receives every message once, in order', async () => {
    const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 1000 });
    const base = await server.listen();
    const cometd = new CometD();
    for (const type of cometd.getTransportTypes()) if (type !== transport) cometd.unregisterTransport(type);
    cometd.registerExtension('ack', new AckExtension());
    cometd.configure({ url: `${base}/bayeux`, logLevel: 'warn' });
    const received: unknown[] = [];
    await new Promise((resolve) => cometd.handshake(resolve));
    await new Promise((resolve) =>
      cometd.subscribe('/acked', (m: Message) => received.push(m.data), resolve),
    );
    expect(server.bayou.session(cometd.getClientId() as string)?.deliveryMode).toBe('connect-reply');
    // Five batches of ten, each delivered before the next is published: several connect replies.
    for (let i = 0; i < 50; i++) {
      server.bayou.publish('/acked', i);
      if (i % 10 === 9) await eventually(() => received.length > i);
    }
    // A last message on the same path: once it is in, any second copy of the others would be too.
    server.bayou.publish('/acked', 'end');
    await eventually(() => received.includes('end'));
    expect(received).toEqual([...Array.from({ length: 50 }, (_, i) => i), 'end']);
    await new Promise((resolve) => cometd.disconnect(resolve));
    await server.close();
  });
});
