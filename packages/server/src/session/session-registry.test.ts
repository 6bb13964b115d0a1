import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { LONG_POLLING_CARRIER, WEBSOCKET_CARRIER } from '../transports/carrier-kinds.js';
import type { Session, SessionHost } from './session.js';
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
      const held = { id: '1', deadline: Date.now() + 500, poll: null, browserId: null };
      r.transition(holding, { type: 'hold-poll', held }, Date.now(), 1000);
      const timedOut: string[] = [];
      const expired: string[] = [];
      r.startSweeping(100, {
        connectTimedOut: (s) => {
          timedOut.push(s.id);
          r.transition(s, { type: 'release' }, Date.now(), 1000);
        },
        sessionExpired: (s) => {
          expired.push(s.id);
          r.transition(s, { type: 'remove' }, Date.now(), 1000);
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
      // Ended sessions leave nothing on the wheel.
      expect(r.waiting).toBe(0);
      r.stopSweeping();
    } finally {
      vi.useRealTimers();
    }
  });

  it('looks only at the sessions due: the others are not visited by a sweep', () => {
    const r = new SessionRegistry(host, 60_000, 'node1', 1000);
    const t0 = Date.now();
    const soon = r.create(LONG_POLLING_CARRIER, t0 - 59_000);
    for (let i = 0; i < 1000; i++) r.create(LONG_POLLING_CARRIER, t0);
    const looked: string[] = [];
    // A proxy counts every read of a session's deadline fields by the sweep.
    const handler = {
      connectTimedOut: (s: Session) => looked.push(`answer ${s.id}`),
      sessionExpired: (s: Session) => {
        looked.push(s.id);
        r.transition(s, { type: 'remove' }, t0 + 1500, 60_000);
        r.delete(s);
      },
    };
    const read = sessionsRead(r);
    r.sweep(handler, t0 + 1500);
    expect(looked).toEqual([soon.id]);
    // The one due and no other: the rest are due a minute later, on other slots.
    expect([...read]).toEqual([soon.id]);
    expect(r.size).toBe(1000);
    expect(r.waiting).toBe(1000);
  });

  it('drops the deadline of a session that ends, however it ends: memory holds only what is live', () => {
    const r = new SessionRegistry(host, 1000, 'node1', 100);
    const now = Date.now();
    const sessions = Array.from({ length: 100 }, () => r.create(WEBSOCKET_CARRIER, now));
    expect(r.waiting).toBe(100);
    // Removed through the lifecycle (and then unregistered) or just unregistered (a handover).
    for (const s of sessions.slice(0, 50)) r.transition(s, { type: 'remove' }, now, 1000);
    expect(r.waiting).toBe(50);
    for (const s of sessions) r.delete(s);
    expect(r.waiting).toBe(0);
    expect(r.size).toBe(0);
    // A sweep long after finds nothing and files nothing again.
    const handler = { connectTimedOut: vi.fn(), sessionExpired: vi.fn() };
    r.sweep(handler, now + 60_000);
    expect(handler.sessionExpired).not.toHaveBeenCalled();
    expect(r.waiting).toBe(0);
  });

  it('is the only writer of lifecycles in src: no other module calls transition() of session-lifecycle', () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), '..');
    const offenders = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .filter((f) => !f.endsWith('session-registry.ts') && !f.endsWith('session-lifecycle.ts'))
      .filter((f) =>
        /import[^;]*\btransition\b[^;]*session-lifecycle\.js'/.test(readFileSync(join(src, f), 'utf8')),
      );
    expect(offenders).toEqual([]);
  });
});

/** The ids of the registry's sessions whose `held` or `expiresAt` is read from now on. */
function sessionsRead(r: SessionRegistry): Set<string> {
  const read = new Set<string>();
  for (const s of r.values()) {
    for (const field of ['held', 'expiresAt'] as const) {
      let value = s[field];
      Object.defineProperty(s, field, {
        get: () => {
          read.add(s.id);
          return value;
        },
        set: (v) => {
          value = v;
        },
      });
    }
  }
  return read;
}
