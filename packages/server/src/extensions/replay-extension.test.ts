import type { StreamPosition } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import type { Publication } from '../engine/engine.js';
import { MemoryEngine } from '../engine/memory/memory-engine.js';
import { type PublicationDelivery, Session, type SessionHost } from '../session/session.js';
import { LONG_POLLING_CARRIER } from '../transports/carrier-kinds.js';
import { belowFloor, ReplayExtension, type ReplayState } from './replay-extension.js';

const at = (offset: number, epoch = 'e1'): StreamPosition => ({ offset, epoch });

describe('the floor a recovered channel keeps', () => {
  it('drops live copies at or before the recovered position, and lifts at the first one after it', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/a', at(4))).toBe(true);
    expect(belowFloor(floors, '/a', at(5))).toBe(true);
    expect(floors.size).toBe(1);
    expect(belowFloor(floors, '/a', at(6))).toBe(false);
    expect(floors.size).toBe(0);
    // Lifted: nothing is dropped on the channel any more.
    expect(belowFloor(floors, '/a', at(3))).toBe(false);
  });

  it('lifts on a message of another epoch (the channel history was dropped and began again)', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/a', at(1, 'e2'))).toBe(false);
    expect(floors.size).toBe(0);
  });

  it('leaves other channels alone', () => {
    const floors = new Map([['/a', at(5)]]);
    expect(belowFloor(floors, '/b', at(1))).toBe(false);
    expect(floors.get('/a')).toEqual(at(5));
  });
});

describe('a resumed session on the replay extension', () => {
  const policy = { size: 100, ttlMs: 60_000 };
  const host: SessionHost = {
    scheduleFlush: () => undefined,
    overflow: () => false,
    maxQueuedMessages: 1000,
    maxQueuedBytes: Number.POSITIVE_INFINITY,
  };
  /** A publication reaching the session live, as the subscription index hands it on. */
  const live = (publication: Publication): PublicationDelivery => ({
    publication,
    json: publication.payload,
    once: (_key, build) => build(publication),
  });

  it('drops a late live copy of a recovered message, and forgets the floor when it leaves the channel', async () => {
    const engine = new MemoryEngine();
    const publish = (n: number) =>
      engine.bus.history.publish('/a', `{"channel":"/a","data":${n}}`, policy, Date.now());
    const [one, two, three] = [publish(1), publish(2), publish(3)] as [Publication, Publication, Publication];
    const replay = new ReplayExtension(engine.history);
    const session = new Session('n.s', LONG_POLLING_CARRIER, host, Number.POSITIVE_INFINITY);
    replay.outgoing({ successful: true }, { channel: '/meta/handshake', ext: { replay: true } }, session);
    await replay.subscribing(session, '/a', {
      channel: '/meta/subscribe',
      subscription: '/a',
      ext: { replay: { '/a': one.position } },
    });
    replay.subscribed(session, '/a');
    const state = () => session.extensionState.get(replay) as ReplayState;
    const data = () => session.queue.map((m) => (JSON.parse(m) as { data: number }).data);
    expect(data()).toEqual([2, 3]);
    // The live copies of 2 and 3 come in after the recovery (pub/sub behind the history read).
    expect(session.enqueueHooked(live(two))).toBe(false);
    expect(session.enqueueHooked(live(three))).toBe(false);
    expect(data()).toEqual([2, 3]);
    expect(state().floors?.size).toBe(1);
    replay.unsubscribed(session, '/a');
    expect(state().floors).toBeNull();
  });

  /** A session that negotiated replay, on an engine whose `/a` carries `count` messages. */
  function replaySession(count: number, history = new MemoryEngine().history) {
    const engine = new MemoryEngine();
    const pubs: Publication[] = [];
    for (let n = 1; n <= count; n++)
      pubs.push(engine.bus.history.publish('/a', `{"channel":"/a","data":${n}}`, policy, Date.now()));
    const replay = new ReplayExtension(count > 0 ? engine.history : history);
    const session = new Session('n.s', LONG_POLLING_CARRIER, host, Number.POSITIVE_INFINITY);
    replay.outgoing({ successful: true }, { channel: '/meta/handshake', ext: { replay: true } }, session);
    const state = () => session.extensionState.get(replay) as ReplayState;
    return { engine, pubs, replay, session, state };
  }

  it('makes no Map at the handshake, and keeps only the floor once a subscribe is done', async () => {
    const { replay, session, state } = replaySession(0);
    expect(state()).toMatchObject({ prepared: null, holding: null, floors: null, positions: true });
    const subscribing = replay.subscribing(session, '/a', { channel: '/meta/subscribe', subscription: '/a' });
    // While the history is read: the subscribe prepared, live messages held.
    expect(state().prepared?.size).toBe(1);
    expect(state().holding?.size).toBe(1);
    await subscribing;
    replay.subscribed(session, '/a');
    expect(state().prepared).toBeNull();
    expect(state().holding).toBeNull();
    expect(state().floors?.size).toBe(1);
  });

  it('drops the floors Map when the first live message past the floor lifts it', async () => {
    const { engine, pubs, replay, session, state } = replaySession(2);
    await replay.subscribing(session, '/a', {
      channel: '/meta/subscribe',
      subscription: '/a',
      ext: { replay: { '/a': (pubs[0] as Publication).position } },
    });
    replay.subscribed(session, '/a');
    expect(state().floors?.size).toBe(1);
    const next = engine.bus.history.publish('/a', '{"channel":"/a","data":3}', policy, Date.now());
    expect(session.enqueueHooked(live(next))).toBe(true);
    expect(state().floors).toBeNull();
    expect(session.queue.map((m) => (JSON.parse(m) as { data: number }).data)).toEqual([2, 3]);
  });

  it('drops what a subscribe prepared when the history cannot be read', async () => {
    const failing = new MemoryEngine().history;
    failing.latest = () => Promise.reject(new Error('engine away'));
    const { replay, session, state } = replaySession(0, failing);
    const error = await replay.subscribing(session, '/a', { channel: '/meta/subscribe', subscription: '/a' });
    expect(error).toContain('engine');
    expect(state()).toMatchObject({ prepared: null, holding: null, floors: null });
  });

  it('says where a session being recovered stands on a channel, until its recovery is done', async () => {
    const { engine, pubs, replay, session, state } = replaySession(2);
    const from = (pubs[0] as Publication).position;
    expect(replay.recoveringFrom(session, '/a')).toBeUndefined();
    const subscribing = replay.subscribing(session, '/a', {
      channel: '/meta/subscribe',
      subscription: '/a',
      ext: { replay: { '/a': from } },
    });
    // Held meanwhile: a live message is not queued, so the session stands at `from`.
    const next = engine.bus.history.publish('/a', '{"channel":"/a","data":3}', policy, Date.now());
    expect(session.enqueueHooked(live(next))).toBe(false);
    expect(replay.recoveringFrom(session, '/a')).toEqual(from);
    await subscribing;
    replay.subscribed(session, '/a');
    expect(replay.recoveringFrom(session, '/a')).toBeUndefined();
    expect(state().from).toBeNull();
    // A subscribe without a position: where the channel stood once its latest position is read.
    const fresh = replay.subscribing(session, '/b', { channel: '/meta/subscribe', subscription: '/b' });
    expect(replay.recoveringFrom(session, '/b')).toBeNull();
    await fresh;
    expect(replay.recoveringFrom(session, '/b')).toEqual(await engine.history.latest('/b'));
  });
});
