import { describe, expect, it } from 'vitest';
import { resolveOptions } from './options.js';
import { streaming } from './transports/streaming.js';

describe('resolveOptions', () => {
  it('fills every default and freezes the result', () => {
    const o = resolveOptions();
    expect(o.wsOpenTimeout).toBe(5000);
    expect(o.streamSenseTimeout).toBe(3000);
    expect(o.maxQueuedMessages).toBe(1000);
    expect(o.transports.map((t) => t.name)).toEqual(['websocket', 'streaming', 'long-polling']);
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('leaves streaming out for acks without numbered frames, which a stream cannot carry', () => {
    const o = resolveOptions({ ackFrames: false });
    expect(o.transports.map((t) => t.name)).toEqual(['websocket', 'long-polling']);
    expect(resolveOptions({ ack: false, ackFrames: false }).transports).toHaveLength(3);
    expect(() => resolveOptions({ ackFrames: false, transports: [streaming] })).toThrow(
      /streaming needs "ackFrames"/,
    );
  });

  it('rejects an unknown option with a TypeError naming it', () => {
    expect(() => resolveOptions({ wsTimeout: 1 } as never)).toThrow(/unknown option "wsTimeout"/);
  });

  it('rejects a bad number and an inverted range', () => {
    expect(() => resolveOptions({ connectTimeout: -1 })).toThrow(/"connectTimeout"/);
    expect(() => resolveOptions({ minReconnectDelay: 10, maxReconnectDelay: 5 })).toThrow(
      /"minReconnectDelay"/,
    );
    expect(() => resolveOptions({ transports: [] })).toThrow(/"transports"/);
  });
});
