import { describe, expect, it, vi } from 'vitest';
import { LONG_POLLING_CARRIER, WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { SessionHost } from './session.js';
import { SessionRegistry } from './session-registry.js';

const host: SessionHost = {
  scheduleFlush: () => undefined,
  overflow: () => false,
  maxQueuedMessages: 10,
  maxQueuedBytes: Number.POSITIVE_INFINITY,
};

describe('SessionRegistry', () => {
  it('creates sessions with distinct 144-bit ids', () => {
    const r = new SessionRegistry(host, 1000, 'node1');
    const ids = new Set(Array.from({ length: 1000 }, () => r.create(WEBSOCKET_CARRIER).id));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(Buffer.from(id.split('.')[1] as string, 'base64url')).toHaveLength(18);
  });

  it('sweeps: times out held connects at their deadline and expires idle sessions', () => {
    vi.useFakeTimers();
    try {
      const r = new SessionRegistry(host, 1000, 'node1');
      const idle = r.create(LONG_POLLING_CARRIER, Date.now());
      const holding = r.create(LONG_POLLING_CARRIER, Date.now());
      holding.held = { id: '1', deadline: Date.now() + 500, poll: null, browserId: null };
      const timedOut: string[] = [];
      const expired: string[] = [];
      r.startSweeping(100, {
        connectTimedOut: (s) => {
          timedOut.push(s.id);
          s.held = null;
          s.expiresAt = Date.now() + 1000;
        },
        sessionExpired: (s) => {
          expired.push(s.id);
          r.delete(s);
        },
      });
      vi.advanceTimersByTime(400);
      expect(timedOut).toEqual([]);
      vi.advanceTimersByTime(200);
      expect(timedOut).toEqual([holding.id]);
      expect(expired).toEqual([]);
      vi.advanceTimersByTime(500);
      expect(expired).toEqual([idle.id]);
      vi.advanceTimersByTime(600);
      expect(expired).toEqual([idle.id, holding.id]);
      r.stopSweeping();
    } finally {
      vi.useRealTimers();
    }
  });
});
