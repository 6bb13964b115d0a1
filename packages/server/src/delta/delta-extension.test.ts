import { DELTA_FORMAT, EXT_DELTA, type Message } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import type { Publication } from '../engine/engine.js';
import type { EnqueueHook, ExtensionSession, PublicationDelivery } from '../session/session.js';
import { DeltaExtension } from './delta-extension.js';

/** The part of a session the extension uses. */
function fakeSession(): ExtensionSession {
  let hooks: EnqueueHook[] | null = null;
  return {
    extensionState: new Map(),
    subscriptions: new Set<string>(),
    get enqueueHooks() {
      return hooks;
    },
    addEnqueueHook(hook: EnqueueHook, first = false) {
      hooks = hooks === null ? [hook] : first ? [hook, ...hooks] : [...hooks, hook];
    },
    removeEnqueueHook(hook: EnqueueHook) {
      const rest = (hooks ?? []).filter((h) => h !== hook);
      hooks = rest.length === 0 ? null : rest;
    },
  } as unknown as ExtensionSession;
}

const replay: EnqueueHook = { name: 'replay', beforeEnqueue: () => undefined };
const asks: Message = { channel: '/meta/subscribe', ext: { [EXT_DELTA]: DELTA_FORMAT } };

function delivery(offset: number, data: unknown): PublicationDelivery {
  const payload = JSON.stringify({ channel: '/p', data });
  const publication: Publication = { channel: '/p', payload, position: { offset, epoch: 'e' } };
  return { publication, json: payload, once: () => payload };
}

const big = (n: number) => ({ name: 'a long name that stays the same', other: 'and more of it', n });

describe('DeltaExtension', () => {
  it('gives subscribers in the same state the same delta, and each its own base', () => {
    const ext = new DeltaExtension(replay);
    const [a, b, c] = [fakeSession(), fakeSession(), fakeSession()];
    for (const s of [a, b, c]) ext.beforeSubscribe(s, '/p', asks);
    const first = delivery(1, big(1));
    for (const s of [a, b]) ext.beforeEnqueue(s, first);
    const second = delivery(2, big(2));
    const [ta, tb, tc] = [a, b, c].map((s) => ext.beforeEnqueue(s, second) as string);
    expect(ta).toBe(tb);
    expect(JSON.parse(ta as string).ext[EXT_DELTA]).toEqual({ id: 'e:2', from: 'e:1' });
    // c had no base: whole.
    expect(JSON.parse(tc as string)).toMatchObject({ data: big(2), ext: { [EXT_DELTA]: { id: 'e:2' } } });
  });

  it('forgets a channel on unsubscribe and lets go of the session when none is left', () => {
    const ext = new DeltaExtension(replay);
    const s = fakeSession();
    ext.beforeSubscribe(s, '/p', asks);
    ext.beforeSubscribe(s, '/q', asks);
    expect(s.enqueueHooks).toEqual([ext]);
    expect(ext.channelCount).toBe(2);
    ext.unsubscribed(s, '/p');
    expect((s.extensionState.get(ext) as Set<string>).has('/p')).toBe(false);
    expect(ext.channelCount).toBe(1);
    ext.unsubscribed(s, '/q');
    expect(s.extensionState.has(ext)).toBe(false);
    expect(s.enqueueHooks).toBeNull();
    expect(ext.channelCount).toBe(0);
  });

  it("forgets a removed session's channels, and keeps those others still follow", () => {
    const ext = new DeltaExtension(replay);
    const [a, b] = [fakeSession(), fakeSession()];
    ext.beforeSubscribe(a, '/p', asks);
    ext.beforeSubscribe(a, '/q', asks);
    ext.beforeSubscribe(b, '/p', asks);
    ext.beforeEnqueue(a, delivery(1, big(1)));
    ext.removed(a);
    expect(ext.channelCount).toBe(1);
    // b still gets /p: whole first, then deltas.
    expect(JSON.parse(ext.beforeEnqueue(b, delivery(2, big(2))) as string).ext[EXT_DELTA]).toEqual({
      id: 'e:2',
    });
    expect(JSON.parse(ext.beforeEnqueue(b, delivery(3, big(3))) as string).ext[EXT_DELTA]).toEqual({
      id: 'e:3',
      from: 'e:2',
    });
    ext.removed(b);
    expect(ext.channelCount).toBe(0);
  });

  it('a subscribe without deltas ends them on that channel', () => {
    const ext = new DeltaExtension(replay);
    const s = fakeSession();
    ext.beforeSubscribe(s, '/p', asks);
    ext.beforeEnqueue(s, delivery(1, big(1)));
    ext.beforeSubscribe(s, '/p', { channel: '/meta/subscribe' });
    expect(ext.channelCount).toBe(0);
    expect(s.enqueueHooks).toBeNull();
  });

  it('never reads the state of a session without deltas (a real session would create its map)', () => {
    const ext = new DeltaExtension(replay);
    let reads = 0;
    const s = fakeSession();
    const state = s.extensionState;
    Object.defineProperty(s, 'extensionState', {
      get: () => {
        reads++;
        return state;
      },
    });
    const plain: Message = { channel: '/meta/subscribe' };
    ext.beforeSubscribe(s, '/p', plain);
    ext.outgoing({ channel: '/meta/subscribe', successful: true }, plain, s);
    ext.unsubscribed(s, '/p');
    ext.removed(s);
    expect(reads).toBe(0);
    // One with deltas does, and lets go of them on removal.
    ext.beforeSubscribe(s, '/p', asks);
    expect(reads).toBeGreaterThan(0);
    ext.removed(s);
    expect(state.size).toBe(0);
    expect(ext.channelCount).toBe(0);
  });

  it('leaves other channels to the next hook', () => {
    const ext = new DeltaExtension(replay);
    const s = fakeSession();
    ext.beforeSubscribe(s, '/q', asks);
    expect(ext.beforeEnqueue(s, delivery(1, big(1)))).toBeUndefined();
  });
});
