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
    ext.unsubscribed(s, '/p');
    expect((s.extensionState.get(ext) as Map<string, unknown>).has('/p')).toBe(false);
    ext.unsubscribed(s, '/q');
    expect(s.extensionState.has(ext)).toBe(false);
    expect(s.enqueueHooks).toBeNull();
  });

  it('leaves other channels to the next hook', () => {
    const ext = new DeltaExtension(replay);
    const s = fakeSession();
    ext.beforeSubscribe(s, '/q', asks);
    expect(ext.beforeEnqueue(s, delivery(1, big(1)))).toBeUndefined();
  });
});
