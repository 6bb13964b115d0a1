import type { Message } from '@bayou/protocol';
import { describe, expect, it } from 'vitest';
import { OrderedLongPolling } from '../cluster/ordered-long-polling.js';
import type { DeliveryMode, ExtensionSession } from '../session/session.js';
import { connectionTypes, LONG_POLLING_CARRIER } from '../transports/carrier-kinds.js';
import type { RequestInfo } from '../types.js';
import { type Extension, ExtensionPipeline } from './extensions.js';

/** Just what the pipeline and the ordered long-polling extension touch of a session. */
function fakeSession(): ExtensionSession & { mode: DeliveryMode } {
  const s = {
    mode: 'push' as DeliveryMode,
    extensionState: new Map<object, unknown>(),
    get deliveryMode() {
      return s.mode;
    },
    requestDelivery(mode: DeliveryMode) {
      s.mode = mode;
    },
  };
  return s as unknown as ExtensionSession & { mode: DeliveryMode };
}

const request = { transport: 'long-polling', carrier: LONG_POLLING_CARRIER } as RequestInfo;
const connect = { channel: '/meta/connect', clientId: 'c', connectionType: 'long-polling' } as Message;

describe('ExtensionPipeline', () => {
  it('orders extensions by stage, keeping registration order within one', () => {
    const pipeline = new ExtensionPipeline();
    pipeline.add({ name: 'audit' });
    pipeline.add({ name: 'ack', stage: 'protocol' });
    pipeline.add({ name: 'auth', stage: 'guard' });
    pipeline.add({ name: 'metrics', stage: 'app' });
    pipeline.add({ name: 'limits', stage: 'guard' });
    expect(pipeline.order).toEqual([
      'guard:auth',
      'guard:limits',
      'protocol:ack',
      'app:audit',
      'app:metrics',
    ]);
  });

  it('refuses an unknown stage with the ones there are', () => {
    const pipeline = new ExtensionPipeline();
    expect(() => pipeline.add({ name: 'x', stage: 'first' } as unknown as Extension)).toThrow(
      'extension x: stage must be one of guard, protocol, app (got first)',
    );
  });

  it("runs accepted only when every stage let the message through, even a later app's refusal", async () => {
    const pipeline = new ExtensionPipeline();
    const ordered = new OrderedLongPolling(connectionTypes);
    pipeline.add(ordered);
    let verdict: string | undefined = '403::no';
    pipeline.add({ name: 'gate', incoming: () => Promise.resolve(verdict) });
    const session = fakeSession();
    expect(await pipeline.incoming(connect, session, request)).toBe('403::no');
    expect(session.deliveryMode).toBe('push');
    verdict = undefined;
    expect(await pipeline.incoming(connect, session, request)).toBeUndefined();
    expect(session.deliveryMode).toBe('connect-reply');
  });

  it('runs guards before protocol extensions whatever the order they were added in', () => {
    const pipeline = new ExtensionPipeline();
    const seen: string[] = [];
    pipeline.add({ name: 'ordered', stage: 'protocol', accepted: () => void seen.push('accepted') });
    pipeline.add({
      name: 'guard',
      stage: 'guard',
      incoming: () => {
        seen.push('guard');
        return '402::session_unknown';
      },
    });
    expect(pipeline.incoming(connect, fakeSession(), request)).toBe('402::session_unknown');
    expect(seen).toEqual(['guard']);
  });
});
