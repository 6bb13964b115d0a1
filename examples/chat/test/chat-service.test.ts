/**
 * The chat server's rules over the raw Bayeux wire (long-polling), where a client can send
 * what the page never would: a forged sender, over-long input, direct publishes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatServer } from '../src/server/chat-server.js';
import { type ChatMessage, LIMITS } from '../src/shared/chat-protocol.js';
import { type Msg, RawClient, startChat } from './helpers.js';

const servers: ChatServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function chat(bayou: Record<string, number> = {}): Promise<string> {
  const { server, url } = await startChat({ bayou: { timeout: 500, ...bayou } });
  servers.push(server);
  return url;
}

async function member(url: string, name: string, room = 'lobby'): Promise<RawClient> {
  const client = new RawClient(url);
  const reply = await client.handshake(name);
  expect(reply.successful).toBe(true);
  expect((await client.subscribe(`/chat/${room}`)).successful).toBe(true);
  return client;
}

const messages = (received: Msg[]): ChatMessage[] =>
  received.map((m) => m.data as ChatMessage).filter((d) => d?.type === 'message');
interface PresenceEvent {
  action: 'join' | 'leave';
  member: { clientId: string; user: string };
}
/** Joins and leaves as `join bob` / `leave bob`, from `/presence/chat/<room>`. */
const presence = (received: Msg[]): string[] =>
  received
    .filter((m) => m.channel.startsWith('/presence/'))
    .map((m) => m.data as PresenceEvent)
    .map((e) => `${e.action} ${e.member.user}`);
/** The members' names from `/service/presence`. */
async function members(client: RawClient, room = 'lobby'): Promise<string[]> {
  const { data } = await client.request('/service/presence', { channel: `/chat/${room}` });
  return (data as { members: { user: string }[] }).members.map((m) => m.user).sort();
}

describe('chat server', () => {
  it('stamps a message with the sender of the session, whatever sender the message claims', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    const mallory = await member(url, 'mallory');
    const sent = await mallory.request('/service/chat/send', {
      room: 'lobby',
      text: 'I am alice',
      user: 'alice',
    });
    expect(sent.error).toBeUndefined();
    await alice.until((r) => messages(r).length === 1);
    expect(messages(alice.received)[0]).toMatchObject({ user: 'mallory', text: 'I am alice', room: 'lobby' });
    const history = await alice.request('/service/chat/history', { room: 'lobby' });
    expect((history.data as { messages: ChatMessage[] }).messages.map((m) => m.user)).toEqual(['mallory']);
  });

  it('refuses direct client publishes to rooms, so nothing bypasses the stamping service', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    const mallory = await member(url, 'mallory');
    const [reply] = await mallory.call('/chat/lobby', {
      data: { type: 'message', user: 'alice', text: 'forged' },
    });
    expect(reply).toMatchObject({ successful: false, error: '403:/chat/lobby:publish_denied' });
    await alice.request('/service/chat/send', { room: 'lobby', text: 'marker' });
    await alice.until((r) => messages(r).length >= 1);
    expect(messages(alice.received).map((m) => m.text)).toEqual(['marker']);
  });

  it('enforces the name length and refuses empty or control-character names at the handshake', async () => {
    const url = await chat();
    const longest = 'n'.repeat(LIMITS.nameLength);
    expect((await new RawClient(url).handshake(longest)).successful).toBe(true);
    for (const bad of ['n'.repeat(LIMITS.nameLength + 1), '', '   ', 'a\u0000b', 42, undefined]) {
      const reply = await new RawClient(url).handshake(bad);
      expect(reply, JSON.stringify(bad)).toMatchObject({ successful: false, error: '403::handshake_denied' });
    }
  });

  it('enforces the message length on room and private messages', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    await member(url, 'bob');
    const max = 'm'.repeat(LIMITS.textLength);
    expect((await alice.request('/service/chat/send', { room: 'lobby', text: max })).error).toBeUndefined();
    const tooLong = `${max}m`;
    expect(await alice.request('/service/chat/send', { room: 'lobby', text: tooLong })).toEqual({
      error: `400:${LIMITS.textLength}:text_too_long`,
    });
    expect(await alice.request('/service/chat/private', { to: 'bob', text: tooLong })).toEqual({
      error: `400:${LIMITS.textLength}:text_too_long`,
    });
    expect((await alice.request('/service/chat/send', { room: 'lobby', text: '  ' })).error).toMatch(
      /text_missing/,
    );
    const history = await alice.request('/service/chat/history', { room: 'lobby' });
    expect((history.data as { messages: ChatMessage[] }).messages.map((m) => m.text.length)).toEqual([
      LIMITS.textLength,
    ]);
  });

  it('sends only to rooms the sender is in, and refuses invalid room names', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    expect((await alice.request('/service/chat/send', { room: 'other', text: 'hi' })).error).toBe(
      '403:other:not_in_room',
    );
    expect((await alice.subscribe('/chat/**')).successful).toBe(false);
    expect((await alice.subscribe('/chat/Bad Room')).successful).toBe(false);
    expect((await alice.subscribe('/elsewhere')).successful).toBe(false);
  });

  it('keeps the last 50 messages of a room for people who join later', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    for (let i = 1; i <= LIMITS.history + 10; i++) {
      await alice.request('/service/chat/send', { room: 'lobby', text: `m${i}` });
    }
    const late = new RawClient(url);
    await late.handshake('late');
    const history = await late.request('/service/chat/history', { room: 'lobby' });
    const texts = (history.data as { messages: ChatMessage[] }).messages.map((m) => m.text);
    expect(texts).toHaveLength(LIMITS.history);
    expect(texts[0]).toBe('m11');
    expect(texts.at(-1)).toBe(`m${LIMITS.history + 10}`);
  });

  it('keeps the members as Bayou presence: a user with two sessions is two members, one user', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    expect((await alice.subscribe('/presence/chat/lobby')).successful).toBe(true);
    const bob1 = await member(url, 'bob');
    const bob2 = await member(url, 'bob');
    await alice.until((r) => presence(r).filter((e) => e === 'join bob').length === 2);
    expect(await members(alice)).toEqual(['alice', 'bob', 'bob']);
    await bob1.call('/meta/unsubscribe', { subscription: '/chat/lobby' });
    await bob2.disconnect();
    await alice.until((r) => presence(r).filter((e) => e === 'leave bob').length === 2);
    expect(await members(alice)).toEqual(['alice']);
  });

  it('removes a member whose session expires (a closed tab)', async () => {
    const url = await chat({ maxInterval: 300, sweepInterval: 50 });
    const alice = await member(url, 'alice');
    expect((await alice.subscribe('/presence/chat/lobby')).successful).toBe(true);
    await member(url, 'gone'); // never polls again
    await alice.until((r) => presence(r).includes('leave gone'), 5000);
    expect(await members(alice)).toEqual(['alice']);
  });

  it('lets clients follow members of rooms only, and never publish presence', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    expect((await alice.subscribe('/presence/service/chat/inbox')).successful).toBe(false);
    const [reply] = await alice.call('/presence/chat/lobby', { data: { action: 'join' } });
    expect(reply?.error).toBe('403:/presence/chat/lobby:publish_denied');
  });

  it('delivers a private message to the addressee and the sender only', async () => {
    const url = await chat();
    const alice = await member(url, 'alice');
    const bob = await member(url, 'bob');
    const carol = await member(url, 'carol');
    for (const c of [alice, bob, carol]) await c.subscribe('/service/chat/inbox');
    expect(
      (await alice.request('/service/chat/private', { to: 'bob', text: 'psst', from: 'carol' })).error,
    ).toBe(undefined);
    const isPrivate = (r: Msg[]) => r.some((m) => (m.data as { type?: string })?.type === 'private');
    await bob.until(isPrivate);
    await alice.until(isPrivate);
    const got = bob.received.find((m) => m.channel === '/service/chat/inbox');
    expect(got?.data).toMatchObject({ from: 'alice', to: 'bob', text: 'psst' });
    await carol.request('/service/chat/send', { room: 'lobby', text: 'marker' });
    await carol.until((r) => messages(r).length > 0);
    expect(isPrivate(carol.received)).toBe(false);
    expect(await alice.request('/service/chat/private', { to: 'nobody', text: 'hi' })).toEqual({
      error: '404:nobody:user_offline',
    });
  });
});
