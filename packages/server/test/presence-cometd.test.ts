/**
 * Presence with the official CometD client (`cometd@9` in Node), over both transports:
 * `remoteCall('/presence', { channel })` lists the members, `/presence<channel>` carries
 * joins and leaves, and a channel the client may not read is refused with a 403. The token
 * goes in the handshake's `ext.auth.token`, as any CometD application would send it.
 * (`adapt()` installs globals, hence its own file.)
 */
import { CometD, type Message } from 'cometd';
import { adapt } from 'cometd-nodejs-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Inbox, TRANSPORTS, type Transport, within } from './interop-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';
import { type Started, startServer } from './start-server.js';

adapt();
const REPLY_MS = 5000;

interface Event {
  action: 'join' | 'leave';
  member: { clientId: string; user: string | null };
}

describe.each(TRANSPORTS)('presence with the CometD client over %s', (transport: Transport) => {
  let started: Started | null = null;
  const clients: CometD[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0))
      await within(new Promise((r) => c.disconnect(r)), REPLY_MS, 'disconnect').catch(() => undefined);
    await started?.server.close();
    started = null;
  });

  async function cometd(user: string): Promise<CometD> {
    started ??= await startServer({ auth: presenceAuth });
    const c = new CometD();
    for (const type of c.getTransportTypes()) if (type !== transport) c.unregisterTransport(type);
    c.configure({ url: `${started.base}/bayeux`, logLevel: 'warn' });
    clients.push(c);
    const t = await token({ sub: user });
    const reply = await within(
      new Promise<Message>((resolve) => c.handshake({ ext: { auth: { token: t } } }, resolve)),
      REPLY_MS,
      'handshake',
    );
    expect(reply.successful).toBe(true);
    return c;
  }

  function subscribe(c: CometD, channel: string, onMessage: (m: Message) => void): Promise<Message> {
    return within(
      new Promise((resolve) => c.subscribe(channel, onMessage, resolve)),
      REPLY_MS,
      `subscribe ${channel}`,
    );
  }

  function members(c: CometD, channel: string): Promise<Message> {
    return within(
      new Promise((resolve) => c.remoteCall('/presence', { channel }, REPLY_MS, resolve)),
      REPLY_MS,
      'remoteCall /presence',
    );
  }

  it('sees the members and their joins and leaves, and is refused a channel it may not read', async () => {
    const ada = await cometd('ada');
    const events = new Inbox<Event>();
    expect(
      (await subscribe(ada, '/presence/chat/lobby', (m) => events.push(m.data as Event))).successful,
    ).toBe(true);
    const bob = await cometd('bob');
    let bobSub: unknown;
    await within(
      new Promise((resolve) => {
        bobSub = bob.subscribe('/chat/lobby', () => undefined, resolve);
      }),
      REPLY_MS,
      'bob subscribe',
    );
    expect((await events.waitFor(1))[0]).toMatchObject({ action: 'join', member: { user: 'bob' } });
    const listed = await members(ada, '/chat/lobby');
    expect(listed.successful).toBe(true);
    expect((listed.data as { members: { user: string }[] }).members.map((m) => m.user)).toEqual(['bob']);

    await within(
      new Promise((resolve) => bob.unsubscribe(bobSub as never, resolve)),
      REPLY_MS,
      'unsubscribe',
    );
    expect((await events.waitFor(2))[1]).toMatchObject({ action: 'leave', member: { user: 'bob' } });

    const refused = await members(ada, '/secret/plans');
    expect(refused.successful).toBe(false);
    expect(refused.error).toBe('403:/secret/plans:subscribe_denied');
    const follow = await subscribe(ada, '/presence/secret/plans', () => undefined);
    expect(follow.successful).toBe(false);
    expect(follow.error).toBe('403:/presence/secret/plans:subscribe_denied');
  });
});
